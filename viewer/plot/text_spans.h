// Text with coloured spans: tokens of a sequence drawn as coloured chips (background = a value through
// a colour map), wrapped to the available width, each with an optional hover tooltip.
#pragma once
#include <vector>

#include "viewer/model/text_span.h"

namespace moxlab::viewer {

// Draws the spans left to right, wrapping at the window's content width; dark text on light
// backgrounds, light text on dark ones.
void text_spans(const std::vector<TextSpan>& spans);

}  // namespace moxlab::viewer
