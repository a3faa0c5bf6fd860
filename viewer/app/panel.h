// The viewer's panel API. A panel is one class in one file under viewer/panels/, registered with
// MOXLAB_VIEWER_PANEL(Type, order); the app shows registered panels as tabs in `order` and the
// headless mode finds them by id(). A method issue adds its panel (MoH head load, ToMoE experts) by
// adding one such file: nothing else changes.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace moxlab::viewer {

struct ViewerContext;

class Panel {
 public:
  virtual ~Panel() = default;
  virtual std::string id() const = 0;     // "runs": the --screenshot name
  virtual std::string title() const = 0;  // tab label
  virtual void draw(ViewerContext& ctx) = 0;
  virtual bool hidden() const { return false; }  // not a tab (e.g. the benchmark panel), but screenshot-able
};

void register_panel(int order, std::function<std::unique_ptr<Panel>()> make);
// One fresh instance of every registered panel, in order.
std::vector<std::unique_ptr<Panel>> make_panels();

}  // namespace moxlab::viewer

#define MOXLAB_VIEWER_PANEL(Type, order)                                                                        \
  namespace {                                                                                                   \
  const bool registered_panel_##Type = (::moxlab::viewer::register_panel(                                       \
                                            order, [] { return std::unique_ptr<::moxlab::viewer::Panel>(new Type()); }), \
                                        true);                                                                  \
  }
