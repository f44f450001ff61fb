#include "checks/context.h"

namespace envdoctor::checks {

const imports::ImportModel& Context::model() const {
  std::call_once(model_cache->once,
                 [&] { model_cache->model = std::make_unique<imports::ImportModel>(env, knowledge.package_rules()); });
  return *model_cache->model;
}

}  // namespace envdoctor::checks
