# The release of evo-opt and its runtime libraries, in one place (the top-level project and the
# standalone runtime build, runtime/CMakeLists.txt, read it).
set(EVO_VERSION 0.1.0)
