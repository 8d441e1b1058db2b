#include <toml++/toml.h>

#include <cmath>
#include <stdexcept>

#include "dfmpc/task/task_spec.h"
#include "table_data.h"

namespace dfmpc::task {
namespace {

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

}  // namespace

TaskTable::TaskTable(std::shared_ptr<const TableData> data)
    : data_(std::move(data)), read_(std::make_shared<std::set<std::string>>()) {}

std::string TaskTable::Where(const std::string& key) const {
  if (key.empty()) return data_->file + ": " + (data_->path.empty() ? "(top level)" : data_->path);
  return data_->file + ": " + (data_->path.empty() ? key : data_->path + "." + key);
}

void TaskTable::Fail(const std::string& key, const std::string& message) const {
  throw std::invalid_argument(Where(key) + ": " + message);
}

bool TaskTable::Has(const std::string& key) const {
  read_->insert(key);
  return data_->table.contains(key);
}

const toml::node& TableData::Get(const TaskTable& owner, const std::string& key) const {
  const toml::node* node = table.get(key);
  if (node == nullptr) owner.Fail(key, "missing");
  return *node;
}

namespace {

double AsNumber(const TaskTable& owner, const std::string& key, const toml::node& node) {
  if (!node.is_number()) owner.Fail(key, "expected a number, got " + TypeName(node));
  const double value = node.value<double>().value();
  if (!std::isfinite(value)) owner.Fail(key, "must be finite, got " + std::to_string(value));
  return value;
}

std::string AsText(const TaskTable& owner, const std::string& key, const toml::node& node) {
  if (!node.is_string()) owner.Fail(key, "expected a string, got " + TypeName(node));
  return node.value<std::string>().value();
}

}  // namespace

double TaskTable::Number(const std::string& key) const {
  read_->insert(key);
  return AsNumber(*this, key, data_->Get(*this, key));
}

double TaskTable::Number(const std::string& key, double fallback) const {
  return Has(key) ? Number(key) : fallback;
}

int TaskTable::Integer(const std::string& key) const {
  read_->insert(key);
  const toml::node& node = data_->Get(*this, key);
  if (!node.is_integer()) Fail(key, "expected an integer, got " + TypeName(node));
  const std::int64_t value = node.value<std::int64_t>().value();
  if (value < -(1LL << 30) || value > (1LL << 30)) Fail(key, "out of range");
  return static_cast<int>(value);
}

int TaskTable::Integer(const std::string& key, int fallback) const {
  return Has(key) ? Integer(key) : fallback;
}

bool TaskTable::Boolean(const std::string& key, bool fallback) const {
  if (!Has(key)) return fallback;
  const toml::node& node = data_->Get(*this, key);
  if (!node.is_boolean()) Fail(key, "expected true or false, got " + TypeName(node));
  return node.value<bool>().value();
}

std::string TaskTable::Text(const std::string& key) const {
  read_->insert(key);
  return AsText(*this, key, data_->Get(*this, key));
}

std::string TaskTable::Text(const std::string& key, const std::string& fallback) const {
  return Has(key) ? Text(key) : fallback;
}

std::vector<double> TaskTable::Numbers(const std::string& key) const {
  read_->insert(key);
  const toml::node& node = data_->Get(*this, key);
  const toml::array* array = node.as_array();
  if (array == nullptr) Fail(key, "expected an array of numbers, got " + TypeName(node));
  std::vector<double> values;
  for (std::size_t i = 0; i < array->size(); ++i) {
    values.push_back(AsNumber(*this, key + "[" + std::to_string(i) + "]", *array->get(i)));
  }
  return values;
}

std::vector<std::string> TaskTable::Texts(const std::string& key) const {
  read_->insert(key);
  const toml::node& node = data_->Get(*this, key);
  if (node.is_string()) return {AsText(*this, key, node)};
  const toml::array* array = node.as_array();
  if (array == nullptr) Fail(key, "expected a name or an array of names, got " + TypeName(node));
  std::vector<std::string> values;
  for (std::size_t i = 0; i < array->size(); ++i) {
    values.push_back(AsText(*this, key + "[" + std::to_string(i) + "]", *array->get(i)));
  }
  return values;
}

TaskTable TaskTable::Table(const std::string& key) const {
  read_->insert(key);
  const toml::node& node = data_->Get(*this, key);
  if (!node.is_table()) Fail(key, "expected a table, got " + TypeName(node));
  return TaskTable(std::make_shared<const TableData>(TableData{
      *node.as_table(), data_->file, data_->path.empty() ? key : data_->path + "." + key}));
}

std::vector<TaskTable> TaskTable::Tables(const std::string& key) const {
  if (!Has(key)) return {};
  const toml::node& node = data_->Get(*this, key);
  const toml::array* array = node.as_array();
  if (array == nullptr || !array->is_array_of_tables()) {
    Fail(key, "expected an array of tables ([[" + key + "]]), got " + TypeName(node));
  }
  std::vector<TaskTable> tables;
  const std::string prefix = data_->path.empty() ? key : data_->path + "." + key;
  for (std::size_t i = 0; i < array->size(); ++i) {
    tables.emplace_back(std::make_shared<const TableData>(TableData{
        *array->get(i)->as_table(), data_->file, prefix + "[" + std::to_string(i) + "]"}));
  }
  return tables;
}

std::vector<std::string> TaskTable::Keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : data_->table) keys.emplace_back(key.str());
  return keys;
}

void TaskTable::RejectUnread() const {
  for (const auto& [key, value] : data_->table) {
    const std::string name(key.str());
    if (read_->count(name) == 0) Fail(name, "unknown key");
  }
}

}  // namespace dfmpc::task
