// What a package's own Python code does at import or first use, read as text and never run:
// the pieces that the checks of a package's own search (Triton's libcuda_dirs(), TransformerEngine's
// loads of cuDNN, NVRTC and cuRAND) share. The process's variables, Python's view of the files
// (os.path.exists, os.path.isdir) and glob.glob, all inside the environment's root.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "environment/environment.h"

namespace envdoctor::imports {

// The Python string literal that starts at `at` ('...' or "..."), unescaped; nullopt when none.
std::optional<std::string> literal_at(std::string_view text, size_t at);

// A variable of the process the package runs in: the image's configuration, else this one's.
std::optional<std::string> process_variable(const environment::Environment& env, const std::string& name);

// os.path.exists and os.path.isdir: the path with its links followed (inside the root); a path a
// simulation removed does not exist.
bool path_exists(const environment::Environment& env, const std::string& path);
bool path_is_dir(const environment::Environment& env, const std::string& path);

// glob.glob(DIR + "/" + PATTERN) for a PATTERN without '/', as Python 3 gives it: the entries of
// DIR in the order the directory lists them, hidden names (a leading '.') left out unless the
// pattern starts with one, matched as fnmatch does (case-sensitive on Linux). With `recursive`,
// glob.glob(DIR + "/**/" + PATTERN, recursive=True): DIR itself, then every directory below it
// (links to directories followed, hidden ones skipped), depth first in listing order, each
// searched for PATTERN. Paths are spelled as glob joins them.
// `listings` (may be null) keeps each directory's listing for the next glob of the same run, so
// that a search tried several times (each library, each fix tried on the model) reads every
// directory once.
struct GlobListings {
  std::map<std::tuple<std::string, bool, bool>, std::vector<std::string>> names;  // (dir, dirs only, hidden)
};
std::vector<std::string> python_glob(const environment::Environment& env, const std::string& dir,
                                     const std::string& pattern, bool recursive = false,
                                     GlobListings* listings = nullptr);

// The file that a search of `path` (a PATH value, as execvp and sh search it) finds for `name`
// in the root: "" where no directory holds one; nullopt where an element is relative (the
// working directory's) or the first one found is a directory or not executable, of which no
// verdict follows.
std::optional<std::string> find_on_path(const environment::Environment& env, std::string_view path,
                                        const std::string& name);

}  // namespace envdoctor::imports
