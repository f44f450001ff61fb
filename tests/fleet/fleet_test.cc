// envdoctor in the fleet engines it plugs into, each a real daemon from Debian's packages, bound
// to 127.0.0.1 and stopped by its process id: a one-node Slurm cluster (munged, slurmctld,
// slurmd) whose HealthCheckProgram is contrib/slurm/envdoctor-healthcheck; pdsh and dshbak over
// three environments; node_exporter's textfile collector. A daemon that cannot start here makes
// its test skip with the daemon's own words.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "fixtures/fleet_fixture.h"

namespace envdoctor::test {
namespace {

using namespace std::chrono_literals;

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice for port 0).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// The daemons a test started, stopped by their process ids (SIGTERM, then SIGKILL) however the
// test ends.
class Daemons {
 public:
  ~Daemons() {
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
      ::kill(*it, SIGTERM);
      for (int i = 0; i < 50 && ::kill(*it, 0) == 0; ++i) std::this_thread::sleep_for(100ms);
      if (::kill(*it, 0) == 0) ::kill(*it, SIGKILL);
    }
  }
  void add(pid_t pid) { pids_.push_back(pid); }
  // A daemon that writes its pid file once started; false when none appeared in time.
  bool add_from_pid_file(const std::string& path) {
    for (int i = 0; i < 100; ++i, std::this_thread::sleep_for(100ms)) {
      std::string text = slurp(path);
      if (pid_t pid = static_cast<pid_t>(std::atol(text.c_str())); pid > 0) {
        add(pid);
        return true;
      }
    }
    return false;
  }

 private:
  std::vector<pid_t> pids_;
};

// Polls `probe` until it returns true or `limit` passes.
template <typename F>
bool eventually(F probe, std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (probe()) return true;
    std::this_thread::sleep_for(250ms);
  }
  return probe();
}

class SlurmTest : public FleetTest {
 protected:
  void SetUp() override {
    FleetTest::SetUp();
    if (IsSkipped()) return;
    for (const char* tool : {"munged", "mungekey", "slurmctld", "slurmd", "scontrol", "sinfo", "srun"})
      if (!have_tool(tool)) GTEST_SKIP() << "needs " << tool << " (Debian: slurm-wlm, munge)";
    if (::geteuid() != 0) GTEST_SKIP() << "slurmd must run as root to run jobs and its HealthCheckProgram";
  }

  // munged with its own key and socket; false after saying why.
  bool start_munge() {
    fs::create_directories(tmp_ / "munge");
    fs::permissions(tmp_ / "munge", fs::perms::owner_all, fs::perm_options::replace);
    CommandResult key = run("mungekey -c -b 1024 -k " + quote(tmp_ / "munge/munge.key"));
    if (key.status != 0) return why("mungekey", key.err);
    CommandResult r =
        run("munged -f --socket=" + quote(munge_socket()) + " --key-file=" + quote(tmp_ / "munge/munge.key") +
            " --log-file=" + quote(tmp_ / "munge/log") + " --pid-file=" + quote(tmp_ / "munge/pid") +
            " --seed-file=" + quote(tmp_ / "munge/seed"));
    if (r.status != 0) return why("munged", r.err + slurp(tmp_ / "munge/log"));
    if (!daemons_.add_from_pid_file(tmp_ / "munge/pid")) return why("munged", "no pid file");
    return true;
  }
  std::string munge_socket() const { return tmp_ / "munge/socket"; }

  bool start_slurm(const std::string& health_check) {
    fs::create_directories(tmp_ / "slurm/state");
    fs::create_directories(tmp_ / "slurm/spool");
    std::string host = trim(run("hostname -s").out);
    int ctld = free_port(), slurmd = free_port();
    std::string d = tmp_ / "slurm";
    tmp_.write("slurm/slurm.conf",
               "ClusterName=envdoctor\nSlurmctldHost=" + host +
                   "(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n"
                   "SlurmctldPort=" +
                   std::to_string(ctld) + "\nSlurmdPort=" + std::to_string(slurmd) +
                   "\n"
                   "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" +
                   munge_socket() +
                   "\n"
                   "StateSaveLocation=" +
                   d + "/state\nSlurmdSpoolDir=" + d +
                   "/spool\n"
                   "SlurmctldPidFile=" +
                   d + "/slurmctld.pid\nSlurmdPidFile=" + d +
                   "/slurmd.pid\n"
                   "SlurmctldLogFile=" +
                   d + "/slurmctld.log\nSlurmdLogFile=" + d +
                   "/slurmd.log\n"
                   "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
                   "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
                   "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
                   "ReturnToService=2\nHealthCheckProgram=" +
                   health_check +
                   "\nHealthCheckInterval=2\n"
                   "HealthCheckNodeState=ANY\n"
                   "NodeName=n1 NodeHostname=" +
                   host +
                   " NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n"
                   "PartitionName=debug Nodes=n1 Default=YES MaxTime=INFINITE State=UP\n");
    ::setenv("SLURM_CONF", (d + "/slurm.conf").c_str(), 1);
    CommandResult r = run("slurmctld -i");
    if (r.status != 0 || !daemons_.add_from_pid_file(d + "/slurmctld.pid"))
      return why("slurmctld", r.err + slurp(d + "/slurmctld.log"));
    r = run("slurmd -N n1");
    if (r.status != 0 || !daemons_.add_from_pid_file(d + "/slurmd.pid"))
      return why("slurmd", r.err + slurp(d + "/slurmd.log"));
    if (!eventually([&] { return !node().empty() && node().find("idle") != std::string::npos; }, 20s))
      return why("slurmd", "node n1 never became idle: " + node() + "\n" + slurp(d + "/slurmd.log"));
    return true;
  }

  // "STATE|REASON" of n1, as sinfo prints them.
  std::string node() { return trim(run("sinfo -h -n n1 -o '%T|%E'").out); }

  bool why(const std::string& daemon, const std::string& text) {
    skip_reason_ = daemon + " cannot start here: " + text;
    return false;
  }
  void TearDown() override { ::unsetenv("SLURM_CONF"); }

  Daemons daemons_;
  std::string skip_reason_;
};

// The node stays idle while the environment is healthy, is drained with envdoctor's line when a
// wheel's library is deleted, and resumes when pip repairs it; a node an administrator drained
// is not resumed; `srun envdoctor snapshot --digest` runs as a job.
TEST_F(SlurmTest, HealthCheckDrainsAndResumesTheNode) {
  std::string wheel = package_wheel("gamma", "1.0", 1);
  Venv venv(tmp_, "venv");
  venv.install({wheel});
  std::string conf =
      tmp_.write("healthcheck.conf", "ENVDOCTOR=" + quote(envdoctor()) + "\nENVDOCTOR_PYTHONS=" + quote(venv.python()) +
                                         "\nexport SLURM_CONF=" + quote(tmp_ / "slurm/slurm.conf") + "\n");
  // slurmd gives its HealthCheckProgram no environment: the configuration's path is the one
  // thing a site would put in /etc/envdoctor/healthcheck.conf instead.
  std::string program = tmp_.write(
      "healthcheck", "#!/bin/sh\nENVDOCTOR_HEALTHCHECK_CONF=" + quote(conf) + " exec " +
                         quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/contrib/slurm/envdoctor-healthcheck") + "\n");
  fs::permissions(program, fs::perms::owner_all, fs::perm_options::replace);
  if (!start_munge() || !start_slurm(program)) GTEST_SKIP() << skip_reason_;

  std::this_thread::sleep_for(5s);  // two health checks
  EXPECT_EQ(node(), "idle|none");

  CommandResult job =
      run("timeout 60 srun -N1 " + quote(envdoctor()) + " snapshot --python " + quote(venv.python()) + " --digest");
  EXPECT_EQ(job.status, 0) << job.err;
  EXPECT_EQ(job.out, venv.envdoctor_run("snapshot", "--digest").out);

  fs::remove(venv.site() + "/gamma/lib/libgamma.so.1");
  const std::string drained = "drained|envdoctor: record-missing-file gamma/lib/libgamma.so.1 gamma";
  EXPECT_TRUE(eventually([&] { return node() == drained; }, 20s)) << node();

  venv.install({"--force-reinstall", wheel});
  EXPECT_TRUE(eventually([&] { return node() == "idle|none"; }, 20s)) << node();

  // Drained by someone else: envdoctor leaves it drained.
  ASSERT_EQ(run("scontrol update nodename=n1 state=drain reason=maintenance").status, 0);
  std::this_thread::sleep_for(5s);
  EXPECT_EQ(node(), "drained|maintenance");
}

// pdsh over three "nodes" (its exec module runs the command here, %h the node's name): two
// identical environments at different paths and one broken one. dshbak -c groups by output.
TEST_F(FleetTest, PdshGroupsIdenticalEnvironments) {
  if (!have_tool("pdsh") || !have_tool("dshbak")) GTEST_SKIP() << "needs pdsh and dshbak (Debian: pdsh)";
  std::string wheel = package_wheel("delta", "1.0", 1);
  std::vector<std::unique_ptr<Venv>> venvs;
  for (const char* host : {"n1", "n2", "n3"}) {
    venvs.push_back(std::make_unique<Venv>(tmp_, std::string(host) + "/venv"));
    venvs.back()->install({wheel});
  }
  fs::remove(venvs[2]->site() + "/delta/lib/libdelta.so.1");
  std::string good = trim(venvs[0]->envdoctor_run("snapshot", "--digest").out);
  std::string bad = trim(venvs[2]->envdoctor_run("snapshot", "--digest").out);
  ASSERT_NE(good, bad);

  CommandResult r = run("pdsh -R exec -w 'n[1-3]' " + quote(envdoctor()) + " snapshot --python " +
                        quote(tmp_.path().string()) + "/%h/venv/bin/python --digest | dshbak -c");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "----------------\nn[1-2]\n----------------\n" + good +
                       "\n----------------\nn3\n----------------\n" + bad + "\n");
}

// node_exporter's textfile collector reads what `check --format prom --output` wrote: no scrape
// error, and envdoctor's series as written.
TEST_F(FleetTest, NodeExporterServesTheMetrics) {
  if (!have_tool("prometheus-node-exporter")) GTEST_SKIP() << "needs prometheus-node-exporter";
  Venv venv(tmp_, "venv");
  venv.install({package_wheel("epsilon", "1.0", 1)});
  fs::create_directories(tmp_ / "textfile");
  ASSERT_EQ(venv.envdoctor_run("check", "--format prom --output " + quote(tmp_ / "textfile/envdoctor.prom")).status, 0);
  std::string digest = trim(venv.envdoctor_run("snapshot", "--digest").out);

  int port = free_port();
  CommandResult start =
      run("prometheus-node-exporter --collector.disable-defaults --collector.textfile "
          "--collector.textfile.directory=" +
          quote(tmp_ / "textfile") + " --web.listen-address=127.0.0.1:" + std::to_string(port) + " >" +
          quote(tmp_ / "node_exporter.log") + " 2>&1 </dev/null & echo $!");
  Daemons daemons;
  daemons.add(static_cast<pid_t>(std::atol(start.out.c_str())));
  std::string scrape =
      "python3 -c 'import sys, urllib.request; "
      "sys.stdout.write(urllib.request.urlopen(\"http://127.0.0.1:" +
      std::to_string(port) + "/metrics\", timeout=2).read().decode())'";
  CommandResult metrics;
  if (!eventually([&] { return (metrics = run(scrape)).status == 0; }, 10s))
    GTEST_SKIP() << "node_exporter cannot start here: " << slurp(tmp_ / "node_exporter.log");
  EXPECT_NE(metrics.out.find("\nnode_textfile_scrape_error 0\n"), std::string::npos) << metrics.out;
  std::string env = "environment=\"" + venv.python() + "\"";
  EXPECT_NE(metrics.out.find("\nenvdoctor_check_ok{" + env + "} 1\n"), std::string::npos) << metrics.out;
  EXPECT_NE(metrics.out.find("\nenvdoctor_snapshot_info{digest=\"" + digest + "\"," + env + "} 1\n"), std::string::npos)
      << metrics.out;
  EXPECT_NE(metrics.out.find("\nenvdoctor_findings{code=\"missing-library\"," + env + ",severity=\"error\"} 0\n"),
            std::string::npos)
      << metrics.out;
}

}  // namespace
}  // namespace envdoctor::test
