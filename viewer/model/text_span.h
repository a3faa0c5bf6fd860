// One coloured span of text (a token drawn as a chip: background = a value through a colour map, with an
// optional tooltip): plain data, built by the file readers, drawn by viewer/plot/text_spans.h.
#pragma once
#include <string>

#include "viewer/model/colormap.h"

namespace moxlab::viewer {

struct TextSpan {
  std::string text;
  Rgb background;
  float alpha = 1.0f;    // 0: no background
  std::string tooltip;   // shown on hover when not empty
};

}  // namespace moxlab::viewer
