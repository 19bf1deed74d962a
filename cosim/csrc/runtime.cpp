// Replacements for Verilator's $finish / $stop / $fatal handlers (built with VL_USER_FINISH, VL_USER_STOP and
// VL_USER_FATAL defined). The defaults end the process: a second $finish calls std::exit(0), which would make a
// test binary that is mid-run exit with status 0 and look like a pass. Here each call only flags the current
// context (the shim makes the model's own context current before every eval); the shim checks gotFinish after
// every eval and the Rust wrapper turns it into an error, so a co-simulation can never pass through one.
#include "verilated.h"

#include <cstdio>

void vl_finish(const char* filename, int linenum, const char* hier) VL_MT_UNSAFE {
    std::fprintf(stderr, "cosim: %s:%d: $finish in %s\n", filename, linenum, hier ? hier : "?");
    Verilated::threadContextp()->gotFinish(true);
}

void vl_stop(const char* filename, int linenum, const char* hier) VL_MT_UNSAFE {
    std::fprintf(stderr, "cosim: %s:%d: $stop in %s\n", filename, linenum, hier ? hier : "?");
    Verilated::threadContextp()->gotError(true);
    Verilated::threadContextp()->gotFinish(true);
}

void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) VL_MT_UNSAFE {
    std::fprintf(stderr, "cosim: %s:%d: fatal in %s: %s\n", filename, linenum, hier ? hier : "?",
                 msg ? msg : "");
    Verilated::threadContextp()->gotError(true);
    Verilated::threadContextp()->gotFinish(true);
}
