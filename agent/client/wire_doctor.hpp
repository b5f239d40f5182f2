// `skewscope doctor`'s wire-timestamp section: which send- and receive-side paths
// --wire-timestamps uses on this kernel, and why.
#pragma once

#include <ostream>
#include <string>

namespace skewscope {

// `wire_variant`: the tc variant that loads here (features.hpp), empty when none does.
void print_wire_doctor(std::ostream& out, const std::string& wire_variant);

}  // namespace skewscope
