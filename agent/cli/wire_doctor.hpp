// `skewscope doctor`'s wire-timestamp section: which send- and receive-side paths
// --wire-timestamps uses on this kernel, and why.
#pragma once

#include <ostream>

namespace skewscope {

void print_wire_doctor(std::ostream& out);

}  // namespace skewscope
