// The walk of an object's dependencies (glibc 2.36 elf/dl-deps.c, _dl_map_object_deps): the
// search list, breadth-first, with DT_AUXILIARY and DT_FILTER objects before their filter.
#include <algorithm>

#include "loader/process.h"

namespace envdoctor::loader {

// Inserts `entry` into the l_next chain just before the entry of `before_object`.
static void move_before(std::vector<Process::ListEntry>& chain, Process::ListEntry entry, int before_object) {
  auto at = std::find_if(chain.begin(), chain.end(), [&](const auto& e) { return e.object == before_object; });
  chain.insert(at, std::move(entry));
}

// One breadth-first walk of elf/dl-deps.c: the search list, which of its entries have had their
// dependencies mapped, and which objects it holds.
struct Process::DepsWalk {
  std::vector<int> searchlist;
  std::vector<bool> done;
  std::vector<bool> in_list;

  bool holds(int object, size_t objects) {
    if (in_list.size() < objects) in_list.resize(objects, false);
    return in_list[object];
  }
  void mark(int object, size_t objects) {
    holds(object, objects);
    in_list[object] = true;
  }
};

// open_verify's errors end ld.so even in trace mode (_dl_signal_error, not a fake entry): nothing
// more is mapped and no listing is printed.
void Process::stop_walk(int obj, Resolution r) {
  fatal_ = true;
  objects_[obj].deps.push_back(std::move(r));
}

// A DT_AUXILIARY or DT_FILTER object of `obj`: inserted before it, in the search list and in the
// l_next chain, so that it is walked before the walk moves past `obj`. False when its error ends
// the load.
bool Process::map_filtee(DepsWalk& w, int obj, const elf::ElfFile::Filtee& filtee, size_t& insert_at,
                         std::vector<LoadError>& errors, bool trace) {
  Resolution r = resolve(filtee.name, obj);
  int f = r.object;
  if (f < 0) {
    bool fatal = r.ended_fatally();
    // A missing auxiliary object is ignored; only trace mode lists it (as a fake entry).
    if (filtee.auxiliary && (fatal || !trace)) {
      objects_[obj].deps.push_back(std::move(r));
      return true;
    }
    if (!filtee.auxiliary) {
      errors.push_back(resolution_error(r, obj, objects_[obj].path, host_class_));
      if (fatal) return stop_walk(obj, std::move(r)), false;
    }
    move_before(chain_, ListEntry{-1, r.name}, obj);
  } else if (f != obj) {
    auto pos = std::find(w.searchlist.begin(), w.searchlist.end(), f);
    size_t p = static_cast<size_t>(pos - w.searchlist.begin());
    if (pos == w.searchlist.end() || p > insert_at) {
      if (pos != w.searchlist.end()) {
        w.searchlist.erase(pos);
        w.done.erase(w.done.begin() + static_cast<std::ptrdiff_t>(p));
      }
      w.searchlist.insert(w.searchlist.begin() + static_cast<std::ptrdiff_t>(insert_at), f);
      w.done.insert(w.done.begin() + static_cast<std::ptrdiff_t>(insert_at), false);
      ++insert_at;
      w.mark(f, objects_.size());
      auto c = std::find_if(chain_.begin(), chain_.end(), [&](const ListEntry& x) { return x.object == f; });
      if (c != chain_.end()) chain_.erase(c);
      move_before(chain_, ListEntry{f, {}}, obj);
    }
  }
  objects_[obj].deps.push_back(std::move(r));
  return true;
}

// One DT_NEEDED entry of `obj`: appended to the search list when it is new there. False when its
// error ends the load.
bool Process::map_needed(DepsWalk& w, int obj, std::string_view name, std::vector<LoadError>& errors) {
  Resolution r = resolve(name, obj);
  if (r.object >= 0) {
    if (!w.holds(r.object, objects_.size())) {
      w.mark(r.object, objects_.size());
      w.searchlist.push_back(r.object);
      w.done.push_back(false);
    }
  } else {
    errors.push_back(resolution_error(r, obj, objects_[obj].path, host_class_));
    if (errors.back().kind == LoadError::Kind::kInvalidElf) return stop_walk(obj, std::move(r)), false;
    chain_.push_back({-1, r.name});  // trace mode's fake entry, printed "=> not found"
  }
  objects_[obj].deps.push_back(std::move(r));
  return true;
}

std::vector<int> Process::map_deps(int root, std::vector<LoadError>& errors, bool trace,
                                   const std::vector<int>& preloads) {
  // elf/dl-deps.c: a breadth-first walk in which each object's DT_NEEDED entries are appended to
  // the list and its DT_AUXILIARY/DT_FILTER objects are inserted *before* it, in the list and in
  // the l_next chain, and are then walked themselves before the walk moves past the object.
  DepsWalk w{{root}, {false}, {}};
  w.mark(root, objects_.size());
  for (int p : preloads) {
    w.searchlist.push_back(p);
    w.done.push_back(false);
    w.mark(p, objects_.size());
  }
  for (size_t i = 0; i < w.searchlist.size();) {
    if (w.done[i]) {
      ++i;
      continue;
    }
    w.done[i] = true;
    int obj = w.searchlist[i];
    size_t insert_at = i;  // where the object stands; its filtees go before it
    // Copies: resolving may add objects and so move objects_. The names point into the object's
    // mapping, which outlives the walk.
    std::shared_ptr<const elf::ElfFile> e = objects_[obj].elf;
    std::vector<std::string_view> needed = e ? e->needed : std::vector<std::string_view>();
    std::vector<elf::ElfFile::Filtee> filtees = e ? e->filtees : std::vector<elf::ElfFile::Filtee>();
    objects_[obj].deps.reserve(objects_[obj].deps.size() + needed.size() + filtees.size());
    size_t next_filtee = 0;
    bool go_on = true;
    for (size_t n = 0; go_on && n <= needed.size(); ++n) {
      for (; go_on && next_filtee < filtees.size() && filtees[next_filtee].needed_before <= n; ++next_filtee)
        go_on = map_filtee(w, obj, filtees[next_filtee], insert_at, errors, trace);
      if (go_on && n < needed.size()) go_on = map_needed(w, obj, needed[n], errors);
    }
    if (!go_on) break;
    // Without filtees the walk moves on; with them it goes on at the first one.
    if (insert_at == i) ++i;
  }
  objects_[root].searchlist = w.searchlist;
  return w.searchlist;
}

}  // namespace envdoctor::loader
