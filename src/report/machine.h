// Renderers for programs and fleet tools: the snapshot document, `diff` (text and JSON), and
// `check`'s one-line health-check format for LBNL NHC and Slurm (`--format nhc`) and the
// Prometheus text exposition format for node_exporter's textfile collector (`--format prom`).
// As every renderer, they format what the stages computed and decide nothing.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "report/report.h"
#include "snapshot/diff.h"

namespace envdoctor::report {

// The snapshot as written: sorted keys, two-space indentation, one final newline.
std::string render_snapshot(const nlohmann::json& snapshot);

std::string render_diff_text(const snapshot::Diff& diff);
std::string render_diff_json(const snapshot::Diff& diff);

// "envdoctor: OK", or "envdoctor: <code> <library or file> <package> (+N more)" for the first
// error that is a cause (the report's order: new first, then by package and file). Slurm drain
// reasons are matched by the "envdoctor:" prefix; N counts the other causes. Warnings alone are
// OK, but for one: without errors, on a GPU node (Report::gpu_node), the first package that falls
// back silently is named (`silent-fallback`), N counting the others: its jobs would run on the CPU
// and leave the GPU idle, so the node drains (docs/fleet.md).
std::string render_nhc(const Report& report);
// The exit status that goes with render_nhc's line: 0 for "envdoctor: OK", else 1 (a drain reason).
int nhc_status(const Report& report);

struct PromFacts {
  double seconds = 0;  // the check's wall time
  std::string digest;  // the snapshot's
};
// Every metric carries environment="<interpreter>", so that several environments of one node
// (one .prom file each) are distinct series in one collector.
std::string render_prom(const Report& report, const PromFacts& facts);

}  // namespace envdoctor::report
