// Causes before consequences. One failure often shows as several findings: a file missing from
// where its RECORD puts it (record-missing-file) makes the loader's search fall through to another
// copy that lacks a symbol (undefined-symbol), or find nothing (missing-library); a library not
// found leaves the symbols it would define unbound. The load findings name what they follow from
// (Finding::caused_by, decided from the load model's resolutions and attempts, never from the
// words of a message); this pass links each to the root of its chain among the findings reported,
// so that the consequence names the cause and its fix is the cause's fix (its hint says how it
// follows, then the cause's hint). A cause that is not
// reported (nothing to link to) is dropped, and the finding keeps its own advice.
#pragma once

#include <vector>

#include "checks/finding.h"

namespace envdoctor::checks {

void link_causes(std::vector<Finding>& findings);

// Findings that no other finding explains: what has to be fixed.
size_t count_causes(const std::vector<Finding>& findings);

}  // namespace envdoctor::checks
