// duplicate-library: several copies of one SONAME in the environment (or several copies
// actually loaded by different consumers), and which copy wins for whom. A SONAME for which some
// import order fails is import-order-conflict's (import_order.h), not this check's; copies that
// serve each other in both orders get advice, not a warning of failure.
#pragma once

#include <vector>

#include "checks/finding.h"
#include "checks/import_order.h"
#include "checks/load_checks.h"
#include "environment/environment.h"

namespace envdoctor::checks {

std::vector<Finding> check_duplicate_libraries(const Context& ctx, const ResolutionMap& resolutions,
                                               const ImportOrderResult& orders);

}  // namespace envdoctor::checks
