// Catch2 v2 entry point shared by the test executables.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
