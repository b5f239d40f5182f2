// The table that `skewscope status` prints and `skewscope top` refreshes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace skewscope {

std::string render_status_table(const nlohmann::json& status);

}  // namespace skewscope
