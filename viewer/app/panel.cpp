#include "viewer/app/panel.h"

#include <algorithm>
#include <utility>

namespace moxlab::viewer {

namespace {

std::vector<std::pair<int, std::function<std::unique_ptr<Panel>()>>>& registry() {
  static std::vector<std::pair<int, std::function<std::unique_ptr<Panel>()>>> r;
  return r;
}

}  // namespace

void register_panel(int order, std::function<std::unique_ptr<Panel>()> make) { registry().emplace_back(order, std::move(make)); }

std::vector<std::unique_ptr<Panel>> make_panels() {
  auto r = registry();
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::unique_ptr<Panel>> panels;
  for (auto& [order, make] : r) panels.push_back(make());
  return panels;
}

}  // namespace moxlab::viewer
