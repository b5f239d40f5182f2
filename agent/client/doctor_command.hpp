// `skewscope doctor`: what this kernel offers, which candidate serves each capture family, and
// whether it really loads here (each choice is test-loaded and closed; nothing is kept).
// `doctor --verify [--json]`: every program of every BPF object loaded alone, one verdict per
// program, for the kernel matrix (tests/kernels/) and for operators.
#pragma once

namespace skewscope {

// Exit: 0 the TCP capture has a variant that loads, 1 none (doctor); --verify: 0 when every
// family has a candidate whose programs all load, 1 otherwise; 2 a bad SKEWSCOPE_* variable.
int run_doctor(bool verify, bool json);

}  // namespace skewscope
