#include "checks/context.h"

namespace envdoctor::checks {

const imports::ImportModel& Context::model() const {
  std::call_once(model_cache->once, [&] {
    model_cache->model = std::make_unique<imports::ImportModel>(env, knowledge.package_rules());
    // A GPU the run knows; none where it knows none and no driver; else unknown.
    const CudaTarget& target = settings.gpu;
    model_cache->model->set_gpu(!target.gpus.empty() ? std::optional<bool>(true)
                                : !target.driver     ? std::optional<bool>(false)
                                                     : std::nullopt);
  });
  return *model_cache->model;
}

}  // namespace envdoctor::checks
