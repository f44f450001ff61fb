#include "image/image.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "image/compose.h"
#include "image/layer.h"
#include "image/shell_environment.h"
#include "image/sif.h"
#include "image/squashfs.h"
#include "support/digest.h"
#include "support/parallel.h"
#include "support/root.h"
#include "support/text.h"

namespace envdoctor::image {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr u64 kJsonLimit = 16 << 20;  // an index, a manifest or a configuration

// Docker's default PATH (and the OCI runtime's), for an image whose configuration sets none.
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool is_hex(std::string_view s) { return !s.empty() && s.find_first_not_of("0123456789abcdef") == s.npos; }

// "sha256:HEX" (OCI image spec, "Digests"), the only form a blob path or a cache key is made of.
bool valid_digest(const std::string& d) {
  size_t colon = d.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string alg = d.substr(0, colon);
  return alg.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789+._-") == std::string::npos &&
         is_hex(d.substr(colon + 1)) && d.size() - colon - 1 >= 32;
}
std::string digest_key(const std::string& d) { return d.substr(0, d.find(':')) + "-" + d.substr(d.find(':') + 1); }
std::string blob_path(const std::string& d) {
  return "blobs/" + d.substr(0, d.find(':')) + "/" + d.substr(d.find(':') + 1);
}

// "sha256:HEX" of `text`; "" when libcrypto cannot be opened.
std::string sha256_digest(const std::string& text) {
  std::vector<u8> sum = support::sha256_of(text.data(), text.size());
  return sum.empty() ? "" : "sha256:" + support::hex(sum);
}

// False with `error` set when `text`, which `digest` names, hashes to another digest (only
// sha256 is computed: other algorithms are taken as named).
bool digest_holds(const std::string& text, const std::string& digest, const std::string& what, std::string* error) {
  if (!digest.starts_with("sha256:")) return true;
  std::string got = sha256_digest(text);
  if (got == digest) return true;
  std::string why;
  *error = what + ": its content is " + (got.empty() ? (support::digests_available(&why), why) : got) + ", not the " +
           digest + " it is named by: the image is damaged or was altered";
  return false;
}

std::string string_at(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
std::vector<std::string> strings_at(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object()) return out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const json& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}
const json& object_at(const json& j, const char* key) {
  static const json kEmpty = json::object();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

std::optional<json> parse_json(const std::string& text, const std::string& what, std::string* error) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    *error = what + ": not valid JSON";
    return std::nullopt;
  }
  return j;
}

std::optional<std::string> read_file(const std::string& path, u64 limit, ReadCounter* counter, std::string* error) {
  std::error_code ec;
  u64 size = fs::file_size(path, ec);
  if (ec) {
    *error = path + ": " + ec.message();
    return std::nullopt;
  }
  if (size > limit) {
    *error = path + ": larger than " + std::to_string(limit) + " bytes";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (counter) counter->bytes += size;
  return text.str();
}

// Where an image's blobs are: a layout's directory, or the members of an archive.
class BlobStore {
 public:
  BlobStore(std::string dir, ReadCounter* counter) : dir_(std::move(dir)), counter_(counter) {}
  BlobStore(OuterArchive archive, ReadCounter* counter) : archive_(std::move(archive)), counter_(counter) {}

  std::optional<std::string> read(const std::string& member, std::string* error) const {
    if (archive_) return archive_->read_member(member, kJsonLimit, error);
    return read_file(dir_ + "/" + member, kJsonLimit, counter_, error);
  }
  std::optional<json> read_json(const std::string& member, std::string* error) const {
    std::optional<std::string> text = read(member, error);
    if (!text) return std::nullopt;
    return parse_json(*text, where() + ": " + member, error);
  }
  // The blob `digest` names, read as JSON once its content is found to be what the digest says.
  std::optional<json> read_blob_json(const std::string& digest, std::string* error) const {
    std::string member = blob_path(digest);
    std::optional<std::string> text = read(member, error);
    if (!text || !digest_holds(*text, digest, where() + ": " + member, error)) return std::nullopt;
    return parse_json(*text, where() + ": " + member, error);
  }
  std::unique_ptr<EntryReader> open_tar(const std::string& member, std::string* error) const {
    if (archive_) return archive_->open_member_tar(member, error);
    std::string path = dir_ + "/" + member;
    ChunkSource source = file_source(path, counter_, error);
    if (!source) return nullptr;
    std::unique_ptr<EntryReader> reader = open_tar_stream(std::move(source), error);
    if (!reader) *error = path + ": " + *error;
    return reader;
  }
  std::string where() const { return archive_ ? archive_->path() : dir_; }

 private:
  std::string dir_;
  std::optional<OuterArchive> archive_;
  ReadCounter* counter_;
};

// What the manifest and the configuration say.
struct Manifest {
  std::string config_member;
  std::vector<std::string> layer_members;
  std::vector<std::string> layer_keys;      // cache keys, lowest layer first
  std::vector<LayerDigests> layer_digests;  // what each layer must hash to
  std::string root_key;
  json config;
};

bool fail(std::string* error, const std::string& why) {
  *error = why;
  return false;
}

// The image's configuration read and the cache keys of its layers: diff_ids where the
// configuration has one per layer, else the layers' own digests.
bool read_config(const BlobStore& store, ImageFacts& facts, Manifest& m, const std::vector<std::string>& layer_digests,
                 std::string* error) {
  if (!support::digests_available(error)) return false;
  std::optional<std::string> text = store.read(m.config_member, error);
  if (!text || !digest_holds(*text, facts.config_digest, store.where() + ": " + m.config_member, error)) return false;
  if (facts.config_digest.empty()) facts.config_digest = sha256_digest(*text);
  std::optional<json> config = parse_json(*text, store.where() + ": " + m.config_member, error);
  if (!config) return false;
  m.config = std::move(*config);
  std::vector<std::string> diff_ids = strings_at(object_at(m.config, "rootfs"), "diff_ids");
  for (size_t i = 0; i < m.layer_members.size(); ++i) {
    LayerDigests named;
    if (i < layer_digests.size() && valid_digest(layer_digests[i])) named.stored = layer_digests[i];
    if (diff_ids.size() == m.layer_members.size() && valid_digest(diff_ids[i])) named.content = diff_ids[i];
    std::string id = !named.content.empty() ? named.content : named.stored;
    if (id.empty())
      return fail(error, store.where() + ": layer " + m.layer_members[i] + " has no digest to cache it by");
    // Only SHA-256 is computed; a layer named by another algorithm is checked by the other name.
    if (!named.stored.starts_with("sha256:")) named.stored.clear();
    if (!named.content.starts_with("sha256:")) named.content.clear();
    if (named.stored.empty() && named.content.empty())
      return fail(error, store.where() + ": layer " + m.layer_members[i] + " is named by " + id +
                             ", and envdoctor checks only sha256 digests");
    m.layer_keys.push_back(digest_key(id));
    m.layer_digests.push_back(std::move(named));
  }
  // The composed root is what the configuration and the layers it is made of say: keyed by
  // both, each checked against its digest, so that no crafted image can claim another's root.
  std::string parts = sha256_digest(*text);
  for (const std::string& key : m.layer_keys) parts += "\n" + key;
  m.root_key = digest_key(sha256_digest(parts));
  return true;
}

std::string host_platform_arch() {
#if defined(__aarch64__)
  return "arm64";
#else
  return "amd64";
#endif
}

// The manifest descriptor of an OCI index for `tag` (its ref.name annotation), or the only one,
// or the one for this machine's platform.
std::optional<json> pick_manifest(const json& index, const std::string& tag, const std::string& where,
                                  std::string* error) {
  std::vector<json> manifests;
  if (index.is_object() && index.contains("manifests") && index["manifests"].is_array())
    for (const json& d : index["manifests"])
      if (d.is_object()) manifests.push_back(d);
  std::vector<std::string> names;
  for (const json& d : manifests) {
    std::string name = string_at(object_at(d, "annotations"), "org.opencontainers.image.ref.name");
    if (!name.empty()) names.push_back(name);
    if (!tag.empty() && name == tag) return d;
  }
  auto listed = [&]() {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? std::string("none") : s;
  };
  if (!tag.empty()) {
    *error = where + ": no image tagged " + tag + " (tags: " + listed() + ")";
    return std::nullopt;
  }
  if (manifests.size() == 1) return manifests[0];
  for (const json& d : manifests) {
    const json& platform = object_at(d, "platform");
    if (string_at(platform, "os") == "linux" && string_at(platform, "architecture") == host_platform_arch()) return d;
  }
  *error = where + (manifests.empty() ? ": the index lists no image"
                                      : ": the index lists " + std::to_string(manifests.size()) +
                                            " images: name one as REF:TAG (tags: " + listed() + ")");
  return std::nullopt;
}

constexpr const char* kIndexMediaTypes[] = {"application/vnd.oci.image.index.v1+json",
                                            "application/vnd.docker.distribution.manifest.list.v2+json"};

bool read_oci(const BlobStore& store, const std::string& tag, ImageFacts& facts, Manifest& m, std::string* error) {
  std::optional<json> index = store.read_json("index.json", error);
  if (!index) return false;
  std::string where = store.where();
  // An index may point at an index (a multi-platform image): at most a few levels.
  for (int depth = 0;; ++depth) {
    std::optional<json> desc = pick_manifest(*index, depth == 0 ? tag : "", where, error);
    if (!desc) return false;
    std::string digest = string_at(*desc, "digest");
    if (!valid_digest(digest)) return fail(error, where + ": a manifest descriptor without a valid digest");
    std::optional<json> doc = store.read_blob_json(digest, error);
    if (!doc) return false;
    std::string media = string_at(*desc, "mediaType");
    if (media.empty()) media = string_at(*doc, "mediaType");
    bool nested =
        std::find(std::begin(kIndexMediaTypes), std::end(kIndexMediaTypes), media) != std::end(kIndexMediaTypes);
    if (nested && depth < 4) {
      index = std::move(doc);
      continue;
    }
    facts.digest = digest;
    std::string config_digest = string_at(object_at(*doc, "config"), "digest");
    if (!valid_digest(config_digest)) return fail(error, where + ": the manifest names no valid configuration");
    facts.config_digest = config_digest;
    m.config_member = blob_path(config_digest);
    std::vector<std::string> layer_digests;
    if (doc->contains("layers") && (*doc)["layers"].is_array())
      for (const json& l : (*doc)["layers"]) {
        std::string d = string_at(l, "digest");
        if (!valid_digest(d)) return fail(error, where + ": a layer descriptor without a valid digest");
        layer_digests.push_back(d);
        m.layer_members.push_back(blob_path(d));
      }
    return read_config(store, facts, m, layer_digests, error);
  }
}

bool read_docker(const BlobStore& store, const std::string& tag, ImageFacts& facts, Manifest& m, std::string* error) {
  std::optional<json> manifest = store.read_json("manifest.json", error);
  if (!manifest) return false;
  std::string where = store.where();
  if (!manifest->is_array() || manifest->empty()) return fail(error, where + ": manifest.json lists no image");
  const json* chosen = nullptr;
  std::string tags;
  for (const json& image : *manifest) {
    for (const std::string& t : strings_at(image, "RepoTags")) {
      tags += (tags.empty() ? "" : ", ") + t;
      std::string short_tag = t.substr(t.rfind(':') == std::string::npos ? 0 : t.rfind(':') + 1);
      if (!tag.empty() && !chosen && (t == tag || short_tag == tag)) chosen = &image;
    }
  }
  if (!tag.empty() && !chosen) return fail(error, where + ": no image tagged " + tag + " (tags: " + tags + ")");
  if (!chosen && manifest->size() > 1)
    return fail(error, where + ": the archive holds " + std::to_string(manifest->size()) +
                           " images: name one as FILE:TAG (tags: " + tags + ")");
  if (!chosen) chosen = &(*manifest)[0];
  m.config_member = string_at(*chosen, "Config");
  if (m.config_member.empty()) return fail(error, where + ": manifest.json names no Config");
  m.layer_members = strings_at(*chosen, "Layers");
  // A layer stored as blobs/sha256/HEX (docker 25 and later) is named by its digest; one stored
  // as ID/layer.tar only by the configuration's diff_id.
  std::vector<std::string> layer_digests;
  for (const std::string& member : m.layer_members) {
    std::string normal;
    bool blob = normalize_entry_path(member, &normal) && normal.starts_with("blobs/sha256/") &&
                normal.size() == 13 + 64 && is_hex(normal.substr(13));
    layer_digests.push_back(blob ? "sha256:" + normal.substr(13) : "");
  }
  // The image ID is the configuration's digest, which names its file ("HEX.json" or blobs/sha256/HEX).
  std::string name = fs::path(m.config_member).filename().string();
  if (name.ends_with(".json")) name.resize(name.size() - 5);
  if (is_hex(name) && name.size() == 64) facts.config_digest = "sha256:" + name;
  return read_config(store, facts, m, layer_digests, error);
}

std::vector<std::pair<std::string, std::string>> split_env(const std::vector<std::string>& env) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& e : env) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    out.emplace_back(e.substr(0, eq), e.substr(eq + 1));
  }
  return out;
}

// What the configuration says of the container's process (OCI image spec, "config").
void take_config(const Manifest& m, ImageFacts& facts) {
  const json& process = object_at(m.config, "config");
  facts.layers = m.layer_members.size();
  facts.env = split_env(strings_at(process, "Env"));
  facts.entrypoint = strings_at(process, "Entrypoint");
  facts.cmd = strings_at(process, "Cmd");
}

// Every layer in the cache, the missing ones read (two at a time): nullopt with `error` set.
std::optional<std::vector<Layer>> layers_of(const BlobStore& store, const Manifest& m, const ImageOptions& options,
                                            const std::string& cache, CacheLease* lease, std::string* error) {
  size_t n = m.layer_members.size();
  std::vector<std::optional<Layer>> layers(n);
  std::vector<std::string> errors(n);
  support::parallel_for(
      n,
      [&](size_t i) {
        std::string& why = errors[i];
        layers[i] = load_cached_layer(cache, m.layer_keys[i], &why, lease);
        if (layers[i] || !why.empty()) return;
        std::unique_ptr<EntryReader> reader = store.open_tar(m.layer_members[i], &why);
        if (!reader) return;
        layers[i] = cache_layer(cache, m.layer_keys[i], *reader, m.layer_digests[i], &why, lease);
        if (!layers[i]) why = store.where() + ": layer " + m.layer_members[i] + ": " + why;
      },
      std::min(options.threads, std::max<size_t>(n, 1)));
  std::vector<Layer> out;
  for (size_t i = 0; i < n; ++i) {
    if (!layers[i]) {
      *error = errors[i];
      return std::nullopt;
    }
    out.push_back(std::move(*layers[i]));
  }
  return out;
}

// The root composed, from the cache when it is there (no layer is opened then).
std::optional<std::string> root_of(const BlobStore& store, const Manifest& m, const ImageOptions& options,
                                   const std::string& cache, ImageFacts& facts, std::string* error) {
  CacheLease* lease = facts.lease.get();
  if (std::optional<std::string> cached = cached_root(cache, m.root_key, &facts.problems, lease)) return cached;
  std::optional<std::vector<Layer>> layers = layers_of(store, m, options, cache, lease, error);
  if (!layers) return std::nullopt;
  for (const Layer& l : *layers) facts.problems.insert(facts.problems.end(), l.problems.begin(), l.problems.end());
  return compose_root(cache, m.root_key, *layers, &facts.problems, error, lease, m.layer_keys);
}

bool is_python_name(const std::string& name) {
  if (!name.starts_with("python")) return false;
  return name.find_first_not_of("0123456789.", 6) == std::string::npos;
}

bool is_file_in(const support::FileRoot& root, const std::string& path) {
  struct stat st;
  return ::stat(root.host(path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// `program` as the container's exec finds it: a path as it is, a bare name on PATH.
std::string on_path(const support::FileRoot& root, const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) return is_file_in(root, program) ? program : "";
  for (size_t pos = 0; pos <= path.size();) {
    size_t colon = path.find(':', pos);
    if (colon == std::string::npos) colon = path.size();
    std::string dir = path.substr(pos, colon - pos);
    pos = colon + 1;
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = (dir.back() == '/' ? dir : dir + "/") + program;
    if (is_file_in(root, candidate)) return candidate;
  }
  return "";
}

// The environment of an interpreter found at `exe` (as the image spells it): a virtual
// environment when its bin/ directory's parent has pyvenv.cfg (PEP 405), else the prefix of the
// file it resolves to (/usr/bin/python3 -> python3.11: /usr).
std::string prefix_of(const support::FileRoot& root, const std::string& exe) {
  fs::path bin = fs::path(exe).parent_path();
  std::string venv = bin.parent_path().string();
  if (is_file_in(root, (venv == "/" ? "" : venv) + "/pyvenv.cfg")) return venv;
  return fs::path(root.canonical(exe)).parent_path().parent_path().string();
}

bool choose_interpreter(const support::FileRoot& root, const ImageOptions& options, ImageFacts& facts,
                        std::string* error) {
  if (!options.prefix.empty()) {
    facts.prefix = options.prefix;
    facts.interpreter_source = ImageFacts::InterpreterSource::kPrefix;
    return true;
  }
  std::string path = facts.env_value("PATH").value_or(kDefaultPath);
  using Source = ImageFacts::InterpreterSource;
  auto take = [&](const std::string& exe, Source source) {
    facts.interpreter = exe;
    facts.interpreter_source = source;
    facts.prefix = prefix_of(root, exe);
  };
  if (!options.python.empty()) {
    std::string exe = on_path(root, options.python, path);
    if (exe.empty()) return fail(error, "--python " + options.python + ": no such file in the image");
    take(exe, Source::kPython);
    return true;
  }
  // The command the container runs, when it is a Python: the Entrypoint's, else Cmd's, which
  // docker run passes to an Entrypoint as its arguments (a wrapper such as NGC's
  // nvidia_entrypoint.sh ends in exec "$@", running Cmd's Python).
  for (const auto& [command, source] :
       {std::pair{&facts.entrypoint, Source::kEntrypoint}, std::pair{&facts.cmd, Source::kCmd}}) {
    if (command->empty() || !is_python_name(fs::path(command->front()).filename().string())) continue;
    std::string exe = on_path(root, command->front(), path);
    if (!exe.empty()) {
      take(exe, source);
      return true;
    }
  }
  for (const char* name : {"python3", "python"}) {
    std::string exe = on_path(root, name, path);
    if (!exe.empty()) {
      take(exe, Source::kPath);
      return true;
    }
  }
  return fail(error, "--image " + facts.reference + ": no python3 on the image's PATH (" + path +
                         "): give --python with the interpreter's path in the image, or --prefix");
}

// A squashfs file system (a file, or a SIF image's partition) as the root: one layer, cached
// under a key of the file's identity and metadata (squashfs_key) and composed like any other.
std::optional<std::string> squashfs_root(const std::string& file, const Section& section, std::string_view salt,
                                         const ImageOptions& options, const std::string& cache, ImageFacts& facts,
                                         std::string* error) {
  facts.layers = 1;
  std::optional<std::string> key = squashfs_key(file, section, salt, options.counter, error);
  if (!key) return std::nullopt;
  CacheLease* lease = facts.lease.get();
  if (std::optional<std::string> cached = cached_root(cache, *key, &facts.problems, lease)) return cached;
  error->clear();
  std::optional<Layer> layer = load_cached_layer(cache, *key, error, lease);
  if (!layer) {
    if (!error->empty()) return std::nullopt;
    std::unique_ptr<EntryReader> reader = open_squashfs(file, section, error);
    if (!reader) return std::nullopt;
    layer = cache_layer(cache, *key, *reader, {}, error, lease);  // the key is the file's own (squashfs_key)
  }
  if (!layer) return std::nullopt;
  facts.problems.insert(facts.problems.end(), layer->problems.begin(), layer->problems.end());
  return compose_root(cache, *key, {*layer}, &facts.problems, error, lease, {*key});
}

// REF split into its file and tag: "DIR:TAG" when DIR exists and REF itself does not.
void split_reference(const std::string& ref, std::string* file, std::string* tag) {
  std::error_code ec;
  *file = ref;
  tag->clear();
  if (fs::exists(ref, ec)) return;
  size_t colon = ref.rfind(':');
  if (colon == std::string::npos || colon == 0 || ref.find('/', colon) != std::string::npos) return;
  if (fs::exists(ref.substr(0, colon), ec)) {
    *file = ref.substr(0, colon);
    *tag = ref.substr(colon + 1);
  }
}

}  // namespace

const char* interpreter_source_name(ImageFacts::InterpreterSource source) {
  switch (source) {
    case ImageFacts::InterpreterSource::kPrefix: return "--prefix";
    case ImageFacts::InterpreterSource::kPython: return "--python";
    case ImageFacts::InterpreterSource::kEntrypoint: return "Entrypoint";
    case ImageFacts::InterpreterSource::kCmd: return "Cmd";
    case ImageFacts::InterpreterSource::kPath: return "PATH";
  }
  return "";
}

std::optional<std::string> ImageFacts::env_value(const std::string& name) const {
  std::optional<std::string> value;
  for (const auto& [k, v] : env)
    if (k == name) value = v;
  return value;
}

std::vector<std::pair<std::string, std::string>> parse_environment_file(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    if (line.starts_with("export ")) line = line.substr(7);
    size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string value = line.substr(eq + 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
    if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0])
      value = value.substr(1, value.size() - 2);
    out.emplace_back(line.substr(0, eq), value);
  }
  return out;
}

std::optional<OpenedImage> open_image(const std::string& reference, const ImageOptions& options, std::string* error) {
  std::string file, tag;
  split_reference(reference, &file, &tag);
  std::string cache = options.cache.empty() ? cache_root() : options.cache;
  OpenedImage out;
  ImageFacts& facts = out.facts;
  facts.reference = reference;
  std::error_code ec;
  auto failed = [&](const std::string& why) -> std::optional<OpenedImage> {
    *error = "--image " + reference + ": " + why;
    return std::nullopt;
  };
  if (!fs::exists(file, ec)) return failed("no such file or directory");
  std::optional<u64> bound = cache_bound(error);
  if (!bound) return failed(*error);
  facts.lease = std::make_shared<CacheLease>();
  std::optional<std::string> root;
  if (fs::is_directory(file, ec)) {
    if (!fs::exists(file + "/index.json", ec)) return failed("not an OCI image layout (no index.json)");
    facts.format = "oci-layout";
    BlobStore store(file, options.counter);
    Manifest m;
    if (!read_oci(store, tag, facts, m, error)) return failed(*error);
    take_config(m, facts);
    root = root_of(store, m, options, cache, facts, error);
  } else if (is_squashfs(file)) {
    facts.format = "squashfs";
    root = squashfs_root(file, {}, "", options, cache, facts, error);
    // enroot writes the image's environment into its /etc/environment.
    if (root) {
      std::ifstream in(*root + "/etc/environment", std::ios::binary);
      std::stringstream s;
      s << in.rdbuf();
      facts.env = parse_environment_file(s.str());
    }
  } else if (is_sif(file)) {
    facts.format = "sif";
    std::optional<SifRoot> sif = sif_root_partition(file, options.counter, error);
    if (!sif) return failed(*error);
    if (sif->arch != "unknown" && sif->arch != host_platform_arch())
      facts.problems.push_back("the image's architecture is " + sif->arch + ", not this machine's (" +
                               host_platform_arch() + "): Apptainer runs it only under emulation");
    root = squashfs_root(file, sif->partition, sif->header_tables, options, cache, facts, error);
    if (root) facts.env = read_singularity_environment(*root, &facts.problems);
  } else {
    // Only an archive needs libarchive before its root is cached: a layout's cached root opens no layer.
    if (!libarchive_available(error)) return failed(*error);
    OuterArchive archive(file, options.counter);
    bool docker = archive.has_member("manifest.json");
    if (!docker && !archive.has_member("index.json"))
      return failed("neither an OCI archive (index.json) nor a docker archive (manifest.json), nor squashfs, nor SIF");
    facts.format = docker ? "docker-archive" : "oci-archive";
    BlobStore store(std::move(archive), options.counter);
    Manifest m;
    if (!(docker ? read_docker(store, tag, facts, m, error) : read_oci(store, tag, facts, m, error)))
      return failed(*error);
    take_config(m, facts);
    root = root_of(store, m, options, cache, facts, error);
  }
  if (!root) return failed(*error);
  // The cache back to its bound, now that what this image needs is held (cache.h).
  evict(cache, *bound);
  out.root = *root;
  support::FileRoot file_root(out.root);
  if (!choose_interpreter(file_root, options, facts, error)) return std::nullopt;
  return out;
}

}  // namespace envdoctor::image
