/* A strict random ACPC client built on the reference server's own state parser.
 *
 * Our code; it is compiled against the University of Alberta's project_acpc_server
 * sources (game.c, game.h, rng.c, rng.h), which are NOT part of this repository: build
 * them yourself, then `bench/acpc_reference_interop.py --reference-sources DIR` compiles
 * this file beside them and runs it against our `cbr serve-dealer`.
 *
 * Usage: acpc_reference_client GAMEFILE HOST PORT SEED
 *
 * It sends "VERSION:2.0.0", then for every line the dealer sends:
 *   - parses it with the reference's readMatchState() and requires the whole line (less
 *     its CR LF) to be consumed, and the reference's printMatchState() of the parsed state
 *     to give back the same text: our dealer's MATCHSTATE lines are then exactly what the
 *     reference writes;
 *   - when the state is not finished and it is this seat's turn, picks fold / call /
 *     raise at random (fold only when it is valid per the reference's isValidAction, raise
 *     only when raiseIsValid), checks the action with isValidAction, and answers
 *     "MATCHSTATE...:<action>" with the reference's printAction().
 * It exits 0 when the dealer closes the connection after at least one hand, and 2 with a
 * message on standard error for the first line the reference parser disagrees with.
 * On each finished hand it adds the reference's valueOfState() for its seat; at the end it
 * prints one line, "hands N actions M total CHIPS", to compare with our dealer's SCORE.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "game.h"

static int die(const char *why, const char *line) {
  fprintf(stderr, "reference client: %s%s%s\n", why, line ? ": " : "", line ? line : "");
  exit(2);
}

static int connect_to(const char *host, const char *port) {
  struct addrinfo hints, *res;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &res) != 0) die("cannot resolve the dealer's address", host);
  int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
  if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) die("cannot connect to the dealer", port);
  freeaddrinfo(res);
  return fd;
}

int main(int argc, char **argv) {
  if (argc != 5) die("usage: acpc_reference_client GAMEFILE HOST PORT SEED", NULL);
  FILE *gf = fopen(argv[1], "r");
  if (!gf) die("cannot open the game file", argv[1]);
  Game *game = readGame(gf);
  fclose(gf);
  if (!game) die("the reference cannot read the game file", argv[1]);
  srand((unsigned)strtoul(argv[4], NULL, 10));
  int fd = connect_to(argv[2], argv[3]);
  FILE *in = fdopen(fd, "r"), *out = fdopen(dup(fd), "w");
  if (!in || !out) die("fdopen failed", NULL);
  setvbuf(out, NULL, _IONBF, 0);
  if (fputs("VERSION:2.0.0\r\n", out) == EOF) die("cannot send the version", NULL);

  char line[MAX_LINE_LEN], back[MAX_LINE_LEN], answer[MAX_LINE_LEN];
  long hands = 0, actions = 0;
  double total = 0.0;
  uint32_t last_hand = (uint32_t)-1;
  while (fgets(line, sizeof line, in)) {
    size_t n = strlen(line);
    if (n < 2 || line[n - 2] != '\r' || line[n - 1] != '\n') die("a line not ended by CR LF", line);
    line[n - 2] = '\0';
    if (line[0] == '#' || line[0] == ';') continue; /* comments, as the protocol allows */
    MatchState ms;
    int used = readMatchState(line, game, &ms);
    if (used < 0) die("the reference parser rejects the state", line);
    if ((size_t)used != n - 2) die("the reference parser stops before the end of the state", line);
    if (printMatchState(game, &ms, 0, sizeof back, back) < 0 || strcmp(back, line) != 0)
      die("the reference prints the parsed state differently", line);
    if (ms.state.handId != last_hand) { hands++; last_hand = ms.state.handId; }
    if (ms.state.finished) { total += valueOfState(game, &ms.state, ms.viewingPlayer); continue; }
    if (currentPlayer(game, &ms.state) != ms.viewingPlayer) continue;

    Action action;
    int32_t min_to, max_to;
    int r = rand() % 100;
    action.size = 0;
    if (r < 15) action.type = a_fold;
    else if (r < 55 && raiseIsValid(game, &ms.state, &min_to, &max_to)) {
      action.type = a_raise;
      action.size = game->bettingType == noLimitBetting ? min_to + rand() % (max_to - min_to + 1) : 0;
    } else action.type = a_call;
    if (!isValidAction(game, &ms.state, 0, &action)) { action.type = a_call; action.size = 0; }
    if (!isValidAction(game, &ms.state, 0, &action)) die("no valid action in the state", line);
    int len = snprintf(answer, sizeof answer, "%s:", line);
    if (printAction(game, &action, sizeof answer - len, answer + len) < 0) die("cannot print the action", line);
    if (fprintf(out, "%s\r\n", answer) < 0) die("cannot send the action", answer);
    actions++;
  }
  if (hands == 0) die("the dealer closed the connection before any hand", NULL);
  printf("hands %ld actions %ld total %.6f\n", hands, actions, total);
  return 0;
}
