// The source of engine_test_pch, the target that builds the tests' precompiled header at -O0
// (cmake/EngineTargets.cmake): the header is what it compiles, this file holds nothing.
