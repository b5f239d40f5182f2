#include "client/policy_check_command.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include "domains/duration.hpp"
#include "policy/policy_spec.hpp"

namespace skewscope {

int run_policy_check(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "skewscope policy check: cannot read " << path << "\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = policy::parse_policies(text.str());
  if (!parsed) {
    std::cerr << "skewscope policy check: " << path << ": " << parsed.error << "\n";
    return 2;
  }
  for (const auto& p : parsed->policies) {
    std::string domains;
    for (const auto& d : p.domains) domains += (domains.empty() ? "" : ",") + d;
    std::cout << p.name << ": precision " << format_duration_ns(p.precision_ns) << ", domains " << domains
              << (p.tenant.empty() ? "" : ", tenant " + p.tenant) << "\n";
  }
  std::cout << path << ": " << parsed->policies.size() << " policies, valid" << std::endl;
  return 0;
}

}  // namespace skewscope
