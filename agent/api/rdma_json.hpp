// The status JSON's "rdma" section (--rdma): what the verbs capture saw and what it paired.
#pragma once

#include <nlohmann/json.hpp>

#include "core/agent_report.hpp"

namespace skewscope {

nlohmann::json rdma_json(const RdmaReport& r);

}  // namespace skewscope
