// Access to the datagrams captured from a real ptp4l in tests/data/ptp4l (see capture.sh there).
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace skewscope::clocks::testdata {

inline std::string path(const std::string& name) { return std::string(SKEWSCOPE_PTP4L_DATA) + "/" + name; }

inline std::vector<std::uint8_t> bytes(const std::string& name) {
  std::ifstream in(path(name), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// pmc's decoding of the same reply: the header line ("<portIdentity> seq <n> RESPONSE ...") and
// one "key value" pair per field.
struct PmcText {
  std::string source;  // e.g. "0272e8.fffe.be6385-1"
  int seq = -1;
  std::map<std::string, std::string> fields;
};

inline PmcText pmc_text(const std::string& name) {
  PmcText t;
  std::ifstream in(path(name));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string a, b;
    if (!(ls >> a >> b)) continue;
    if (b == "seq") {
      t.source = a;
      ls >> t.seq;
    } else if (line.rfind("\t\t", 0) == 0) {
      t.fields[a] = b;
    }
  }
  return t;
}

// The captured data sets: <role>_<name>.bin (ptp4l's reply), .request.bin (pmc -z's GET), .pmc.txt.
inline const std::vector<std::string>& captured_exchanges() {
  static const std::vector<std::string> k{"slave_time_status_np",  "slave_port_data_set", "slave_current_data_set",
                                          "slave_parent_data_set", "gm_time_status_np",   "gm_port_data_set",
                                          "gm_current_data_set",   "gm_parent_data_set"};
  return k;
}

}  // namespace skewscope::clocks::testdata
