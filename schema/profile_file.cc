#include "schema/profile_file.h"

#include <google/protobuf/util/json_util.h>

#include "schema/atomic_file.h"
#include "schema/json_reader.h"
#include "schema/one_line.h"

namespace lull {
namespace {

namespace dom = simdjson::dom;

// Converts one parsed document into a ProfileSet. Field paths for messages
// are built only when something is wrong.
class ProfileJsonReader {
 public:
  explicit ProfileJsonReader(const std::string& path) : path_(path) {}

  schema::ProfileSet read(dom::element root) {
    schema::ProfileSet set;
    for_each_field(root, "", [&](std::string_view key, dom::element v, const std::string& at) {
      if (key == "task")
        string_field(v, at, set.mutable_task());
      else if (key == "provenance")
        string_field(v, at, set.mutable_provenance());
      else if (key == "synthetic")
        bool_field(v, at, &set, &schema::ProfileSet::set_synthetic);
      else if (key == "models")
        list_field(v, at, [&](dom::element m, const std::string& item) { model(m, item, set.add_models()); });
      else
        return false;
      return true;
    });
    return set;
  }

 private:
  void model(dom::element e, const std::string& at, schema::ModelProfile* m) {
    // The name first, so that errors inside the model can say which it is.
    std::string label = at;
    if (e.type() == dom::element_type::OBJECT) {
      dom::element name;
      if (!e.get_object().value_unsafe()["name"].get(name) && name.type() == dom::element_type::STRING)
        label += " (" + std::string(name.get_string().value_unsafe()) + ")";
    }
    for_each_field(e, label, [&](std::string_view key, dom::element v, const std::string& f) {
      if (key == "name")
        string_field(v, f, m->mutable_name());
      else if (key == "accuracy")
        double_field(v, f, [&](double d) { m->set_accuracy(d); });
      else if (key == "memory_mb" || key == "memoryMb")
        double_field(v, f, [&](double d) { m->set_memory_mb(d); });
      else if (key == "latencies")
        list_field(v, f, [&](dom::element l, const std::string& item) { latency(l, item, m->add_latencies()); });
      else
        return false;
      return true;
    });
  }

  void latency(dom::element e, const std::string& at, schema::BatchLatency* l) {
    for_each_field(e, at, [&](std::string_view key, dom::element v, const std::string& f) {
      if (key == "batch") {
        std::uint32_t b = 0;
        if (!v.is_null() && !json::to_uint32(v, &b)) fail(f, "expected a whole number >= 0, got " + json::describe(v));
        l->set_batch(b);
      } else if (key == "samples_s" || key == "samplesS") {
        samples(v, f, l->mutable_samples_s());
      } else if (key == "latency_s" || key == "latencyS") {
        double_field(v, f, [&](double d) { l->set_latency_s(d); });
      } else {
        return false;
      }
      return true;
    });
  }

  // The hot loop: every raw measurement of the profile.
  void samples(dom::element v, const std::string& at, google::protobuf::RepeatedField<double>* out) {
    if (v.is_null()) return;
    dom::array list;
    if (v.get_array().get(list)) fail(at, "expected a list of numbers, got " + json::describe(v));
    out->Reserve(static_cast<int>(list.size()));
    std::size_t i = 0;
    for (dom::element x : list) {
      double d;
      if (!json::to_double(x, &d))
        fail(at + "[" + std::to_string(i) + "]", "expected a number, got " + json::describe(x));
      out->AddAlreadyReserved(d);
      ++i;
    }
  }

  // Calls visit(key, value, "at.key") for every field; visit returns false
  // for a key it does not know.
  template <class Visit>
  void for_each_field(dom::element e, const std::string& at, Visit&& visit) {
    dom::object obj;
    if (e.get_object().get(obj)) fail(at.empty() ? "(top level)" : at, "expected an object, got " + json::describe(e));
    for (const auto field : obj) {
      const std::string f = at.empty() ? std::string(field.key) : at + "." + std::string(field.key);
      if (!visit(field.key, field.value, f)) fail(f, "unknown field");
    }
  }

  template <class Item>
  void list_field(dom::element v, const std::string& at, Item&& item) {
    if (v.is_null()) return;
    dom::array list;
    if (v.get_array().get(list)) fail(at, "expected a list, got " + json::describe(v));
    std::size_t i = 0;
    for (dom::element x : list) item(x, at + "[" + std::to_string(i++) + "]");
  }

  void string_field(dom::element v, const std::string& at, std::string* out) {
    if (!v.is_null() && !json::to_string(v, out)) fail(at, "expected a string, got " + json::describe(v));
  }

  template <class Set>
  void double_field(dom::element v, const std::string& at, Set&& set) {
    double d = 0;
    if (!v.is_null() && !json::to_double(v, &d)) fail(at, "expected a number, got " + json::describe(v));
    set(d);
  }

  template <class Msg>
  void bool_field(dom::element v, const std::string& at, Msg* msg, void (Msg::*set)(bool)) {
    bool b = false;
    if (!v.is_null() && !json::to_bool(v, &b)) fail(at, "expected true or false, got " + json::describe(v));
    (msg->*set)(b);
  }

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw ProfileFileError(path_ + ": malformed profile JSON: " + one_line(field + ": " + why));
  }

  std::string path_;
};

}  // namespace

schema::ProfileSet read_profile_set_json(const std::string& path) {
  json::JsonFileReader reader;
  return ProfileJsonReader(path).read(json::parse_file_or_throw<ProfileFileError>(reader, path, "profile JSON"));
}

std::string profile_set_json_text(const schema::ProfileSet& set, const std::string& path) {
  std::string text;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  const auto status = google::protobuf::util::MessageToJsonString(set, &text, opts);
  if (!status.ok()) throw ProfileFileError(path + ": cannot encode profile: " + std::string(status.message()));
  return text;
}

void write_profile_set_json(const schema::ProfileSet& set, const std::string& path) {
  write_file_atomically(path, profile_set_json_text(set, path));
}

}  // namespace lull
