// `envdoctor wheel-tag`: the platform tag each file or wheel earns by auditwheel's policy, and
// whether a wheel's own tags hold, as text for people or JSON for programs (the wheel build reads
// the tag from it). The verdicts are checks::manylinux's; this only formats them.
//
// `--json` is `auditwheel show --json`'s document (auditwheel 6.8, show-schema.json, "version": 1)
// and nothing else, one per file given, one per line, so that what reads auditwheel's output
// reads this. `--json=envdoctor` is envdoctor's own document (schema 3): per file the claimed
// tags and whether they hold, each file's own tag, the symbol versions too new for a better
// policy, and auditwheel's document under "auditwheel".
#pragma once

#include <string>
#include <vector>

#include "python/manylinux.h"

namespace envdoctor::report {

std::string render_wheel_tag_text(const std::vector<python::TagAudit>& audits);
std::string render_wheel_tag_json(const std::vector<python::TagAudit>& audits);
std::string render_wheel_tag_envdoctor_json(const std::vector<python::TagAudit>& audits);

}  // namespace envdoctor::report
