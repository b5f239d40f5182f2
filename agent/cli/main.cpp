// skewscope: the agent and its command-line clients (the contract: docs/contract.md).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/agent_command.hpp"
#include "client/client_commands.hpp"
#include "client/doctor_command.hpp"
#include "client/explain_command.hpp"
#include "client/gate_command.hpp"
#include "client/policy_check_command.hpp"
#include "skewscope/version.hpp"

int main(int argc, char** argv) {
  using namespace skewscope;
  CLI::App app{"skewscope: tells when timestamps across hosts stop telling the truth"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);

  AgentOptions agent;
  auto* agent_cmd = app.add_subcommand("agent", "capture, pair and publish causality_health");
  add_agent_options(*agent_cmd, agent);

  std::string agent_url = kDefaultAgentUrl;
  // status and top take --agent several times: one merged view over all of them.
  std::vector<std::string> agent_urls;
  const std::string agents_help =
      std::string("agent URL (default ") + kDefaultAgentUrl + "); repeat for one merged view";
  bool json = false;
  auto* status_cmd = app.add_subcommand("status", "exit 0 healthy, 1 a pair violated, 2 usage, 3 agent unreachable");
  status_cmd->add_option("--agent", agent_urls, agents_help)->allow_extra_args(false);
  status_cmd->add_flag("--json", json, "print the status JSON");
  AgentConnectionOptions connection;  // TLS trust, client certificate, credentials: client/agent_client.hpp
  add_agent_connection_options(*status_cmd, connection);

  std::string interval = "1s";
  int count = 0;
  bool once = false;
  auto* top_cmd = app.add_subcommand("top", "live table of pairs");
  top_cmd->add_option("--agent", agent_urls, agents_help)->allow_extra_args(false);
  top_cmd->add_option("interval", interval, "refresh interval (1s, 500ms, or seconds)")->capture_default_str();
  top_cmd->add_option("count", count, "number of refreshes (0: until interrupted)");
  top_cmd->add_flag("--once", once, "print one table and exit");
  top_cmd->add_flag("--json", json, "print NDJSON, one status per line");
  add_agent_connection_options(*top_cmd, connection);

  auto* explain_cmd =
      app.add_subcommand("explain", "why causality broke and whose clock it is, one paragraph per incident");
  explain_cmd->add_option("--agent", agent_urls, agents_help)->allow_extra_args(false);
  explain_cmd->add_flag("--json", json, "print the incidents and hosts as JSON");
  add_agent_connection_options(*explain_cmd, connection);

  std::string spec, control_socket = AgentOptions{}.control_socket;
  auto* sim_cmd = app.add_subcommand("simulate", "change a running agent's simulated clock (lab only)");
  sim_cmd->add_option("spec", spec, "NAME=OFFSET[,DRIFTppm]")->required();
  sim_cmd->add_option("--control-socket", control_socket, "the agent's control socket")->capture_default_str();

  auto* doctor_cmd = app.add_subcommand("doctor", "what this kernel supports, which hooks will be used");
  bool verify = false;
  doctor_cmd->add_flag("--verify", verify, "load every program of every BPF object alone and print each verdict");
  doctor_cmd->add_flag("--json", json, "with --verify: JSON, with each refused program's full log");

  std::vector<std::string> ptp4l_sockets;
  auto* clocks_cmd = app.add_subcommand("clocks", "this host's clock sources: ptp4l, PHCs, kernel; error bound");
  clocks_cmd->add_option("--ptp4l-socket", ptp4l_sockets, "ptp4l management socket; repeatable (default: probe)");
  clocks_cmd->add_flag("--json", json, "print JSON");

  std::string clock_error;
  auto* whatif_cmd = app.add_subcommand("whatif", "inversion rates each pair would have under a clock error model");
  whatif_cmd->add_option("--clock-error", clock_error, "e.g. gaussian:1ms or laplace:250us; several with |")
      ->required();
  whatif_cmd->add_option("--agent", agent_url, "agent URL")->capture_default_str();
  whatif_cmd->add_flag("--json", json, "print JSON");
  add_agent_connection_options(*whatif_cmd, connection);

  std::string gate_policy, gate_wait;
  auto* gate_cmd = app.add_subcommand(
      "gate", "exit 0 when a policy is met on every agent, 1 violated, 2 usage, 3 unreachable, 4 unknown");
  gate_cmd->add_option("--policy", gate_policy, "the policy's name (docs/policies.md)")->required();
  gate_cmd->add_option("--agent", agent_urls, agents_help)->allow_extra_args(false);
  gate_cmd->add_option("--wait", gate_wait, "poll once a second until met or this long has passed (e.g. 30s)");
  add_agent_connection_options(*gate_cmd, connection);

  std::string policy_path;
  auto* policy_cmd = app.add_subcommand("policy", "confidence policy files (docs/policies.md)");
  policy_cmd->require_subcommand(1);
  auto* policy_check_cmd = policy_cmd->add_subcommand("check", "validate a policy file: exit 0, or 2 naming the line");
  policy_check_cmd->add_option("file", policy_path, "the policy file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "skewscope: " << e.what() << " (see --help)\n";
    return 2;
  }

  if (agent_cmd->parsed()) return run_agent_command(agent);
  if (status_cmd->parsed()) return run_status(agent_urls, connection, json);
  if (top_cmd->parsed()) return run_top(agent_urls, connection, interval, count, once, json);
  if (explain_cmd->parsed()) return run_explain(agent_urls, connection, json);
  if (sim_cmd->parsed()) return run_simulate(spec, control_socket);
  if (doctor_cmd->parsed()) return run_doctor(verify, json);
  if (clocks_cmd->parsed()) return run_clocks(ptp4l_sockets, json);
  if (gate_cmd->parsed()) return run_gate(gate_policy, agent_urls, connection, gate_wait);
  if (policy_check_cmd->parsed()) return run_policy_check(policy_path);
  if (whatif_cmd->parsed()) return run_whatif(agent_url, connection, clock_error, json);
  return 2;
}
