"""A plugin that cannot load (a missing dependency): the engine must name it and go on."""
raise ImportError("cbr_demo_plugin.broken needs the package 'libmissing', which is not installed")
