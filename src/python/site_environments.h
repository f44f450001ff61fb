// The other Python environments of a container's root (--root, --image): an image often holds
// several (the system Python with its dist-packages and a venv; conda's base and its envs), and
// only one is checked, the one its command runs. The others are found here, without running
// anything, so that the report names each with the command that checks it: a broken module in
// an environment not chosen is never silently left out.
//
// Where they are looked for: every python3 and python on the PATH the container has (a venv by
// its pyvenv.cfg, else the prefix its file resolves to), /usr and /usr/local when they have a
// bin/python3, and the directories that hold environments by convention: each of /, /opt,
// /root, /home/*, /app, /srv and /workspace's children that is a venv (pyvenv.cfg) or a conda
// environment (conda-meta/), their .venv and venv, and a conda installation's envs/*. Deeper
// trees are not walked: an environment elsewhere is found only through PATH.
#pragma once

#include <string>
#include <vector>

#include "support/root.h"

namespace envdoctor::python {

struct OtherEnvironment {
  std::string prefix;   // the container's own path
  std::string python;   // its interpreter, "" when it has none
  std::string version;  // "3.11.2"; "" when it cannot be read
  size_t packages = 0;  // the distributions (*.dist-info, *.egg-info) its sys.path directories hold
  std::string problem;  // why it cannot be read as an environment; "" when it can
  std::string command;  // the command that checks it (filled by the caller, who knows the options)
};

// Every environment of `root` but `chosen` (a prefix inside it), in the order found; `path` is
// the container's PATH.
std::vector<OtherEnvironment> find_other_environments(const support::FileRoot& root, const std::string& path,
                                                      const std::string& chosen);

// A word for a POSIX shell: as it is when nothing in it is special, else single-quoted.
std::string shell_quoted(const std::string& word);

}  // namespace envdoctor::python
