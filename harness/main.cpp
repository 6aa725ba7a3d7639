// A thin main: the CLI lives in harness/app.cpp, the implementations in impls/registry.cpp.
#include "harness/app.h"

int main(int argc, char** argv) { return mtabench::run_app(argc, argv, mtabench::builtin_registry()); }
