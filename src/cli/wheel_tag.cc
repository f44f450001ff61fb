// `envdoctor wheel-tag FILE...`: the platform tag that ELF files earn by auditwheel's policy, and
// for a wheel (a FILE ending in .whl), whether its own platform tags claim more than that.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/session.h"
#include "cuda/tables.h"
#include "elf/elf_file.h"
#include "python/auditwheel_lddtree.h"
#include "python/auditwheel_policy.h"
#include "python/manylinux.h"
#include "python/wheel.h"
#include "report/wheel_tag.h"

namespace envdoctor::cli {

int run_wheel_tag(const std::vector<std::string>& paths, const std::string& json_option) {
  std::string json = json_option == "true" ? "auditwheel" : json_option;
  if (!json.empty() && json != "auditwheel" && json != "envdoctor")
    return tool_failure("--json=" + json + ": the formats are auditwheel (the default) and envdoctor");
  std::string error;
  std::optional<python::AuditwheelPolicies> policies =
      python::AuditwheelPolicies::load(cuda::default_data_dir(), &error);
  if (!policies) return tool_failure(error);
  // The libraries needed from outside a wheel are looked for here, as auditwheel looks for them.
  python::LddHost host(python::LddHost::facts_from_environment());
  std::vector<python::TagAudit> audits;
  for (const std::string& path : paths) {
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".whl") == 0) {
      std::unique_ptr<python::Wheel> wheel = python::Wheel::open(path, &error);
      std::optional<python::TagAudit> audit =
          wheel ? python::audit_wheel(*wheel, *policies, host, &error) : std::nullopt;
      if (!audit) return tool_failure(error);
      audits.push_back(std::move(*audit));
      continue;
    }
    std::shared_ptr<const MappedFile> file = MappedFile::open(path, &error);
    std::unique_ptr<elf::ElfFile> elf = file ? elf::ElfFile::parse(file, &error) : nullptr;
    if (!elf) return tool_failure(path + ": " + error);
    audits.push_back(python::audit_elf_file(path, *policies, host));
  }
  std::cout << (json == "auditwheel"  ? report::render_wheel_tag_json(audits)
                : json == "envdoctor" ? report::render_wheel_tag_envdoctor_json(audits)
                                      : report::render_wheel_tag_text(audits));
  // 1 only for a tag that claims more than the files earn: a lone file claims nothing.
  for (const python::TagAudit& a : audits)
    if (!a.holds()) return 1;
  return 0;
}

}  // namespace envdoctor::cli
