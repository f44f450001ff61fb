// What the report says of an environment beside its own files, found once as it is assembled
// (build_environment): the other Python environments of its root or image, and the code site.py
// would have run at Python's start that envdoctor did not.
#pragma once

#include <string>

#include "environment/environment.h"

namespace envdoctor::environment {

// Under a root or image, its other environments, each with the command that checks it (`root_arg`
// is --root's directory): only the one chosen is checked, and a broken module in another is never
// left out without a word.
void name_other_environments(Environment& env, const std::string& root_arg);

// What site.py would have run at start and envdoctor did not, as one note in env.problems: the .pth
// files' import lines and the customize modules, but those whose effect the model has.
void note_site_code_not_run(Environment& env);

}  // namespace envdoctor::environment
