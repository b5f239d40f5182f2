#pragma once

namespace skewscope {
inline constexpr const char* kVersion = "0.1.0";
}
