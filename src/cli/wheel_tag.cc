// `envdoctor wheel-tag FILE...`: the manylinux tag that ELF files earn, and for a wheel (a
// FILE ending in .whl), whether its platform tags claim an older glibc than its files need.
#include <iostream>
#include <memory>

#include "checks/manylinux.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "elf/elf_file.h"
#include "python/wheel.h"
#include "report/wheel_tag.h"

namespace envdoctor::cli {

int run_wheel_tag(const std::vector<std::string>& paths, bool json) {
  report::WheelTagReport r;
  u16 machine = EM_X86_64;
  bool wrong = false;
  for (const std::string& path : paths) {
    std::string error;
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".whl") == 0) {
      std::unique_ptr<python::Wheel> wheel = python::Wheel::open(path, &error);
      std::optional<checks::WheelTagAudit> audit = wheel ? checks::audit_wheel_tags(*wheel, &error) : std::nullopt;
      if (!audit) return tool_failure(error);
      wrong |= !audit->problems.empty();
      r.wheels.push_back(std::move(*audit));
      continue;
    }
    std::shared_ptr<const MappedFile> file = MappedFile::open(path, &error);
    std::unique_ptr<elf::ElfFile> elf = file ? elf::ElfFile::parse(file, &error) : nullptr;
    if (!elf) return tool_failure(path + ": " + error);
    machine = elf->machine;
    r.files.push_back(checks::manylinux_needs(*elf, path));
    wrong |= !r.files.back().taggable();
  }
  r.policy_libraries = checks::manylinux_libraries(machine);
  std::cout << (json ? report::render_wheel_tag_json(r) : report::render_wheel_tag_text(r));
  return wrong ? 1 : 0;
}

}  // namespace envdoctor::cli
