// Where `envdoctor pip install` found the distributions it installed from an index or from links:
// the --no-index, --find-links, --index-url it was given. pip records none of it (direct_url.json
// only says where a direct URL or path came from), and a fix that reinstalls a package offline,
// from the wheel directory it came from, needs it.
//
// Kept outside the environment, one file per site directory, in
// $XDG_STATE_HOME/envdoctor/index-origins-v1/ (else ~/.local/state/...). Each record is keyed by
// the distribution's metadata directory and that directory's identity (device, inode, mtime), so a
// later reinstall by any other means (a new .dist-info) leaves the record unused.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "python/distribution.h"

namespace envdoctor::python {

// The options `args` (pip's own) give about where to find distributions, with a relative
// --find-links made absolute against `cwd`: what a later `pip install` needs to find them again.
std::vector<std::string> recordable_index_options(const std::vector<std::string>& args, const std::string& cwd);

// Records `options` for each distribution of `dists` (installed just now). false with `error` set
// when the state directory cannot be written; nothing is recorded for empty `options`.
bool record_index_origins(const std::vector<const Distribution*>& dists, const std::vector<std::string>& options,
                          std::string* error);

// The options recorded for `dist`, if its metadata directory is still the one recorded and every
// local --find-links directory is still there; empty otherwise.
std::vector<std::string> recorded_index_origin(const Distribution& dist);

}  // namespace envdoctor::python
