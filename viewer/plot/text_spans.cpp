#include "viewer/plot/text_spans.h"

#include <imgui.h>

#include <algorithm>

#include "viewer/plot/plot.h"

namespace moxlab::viewer {

void text_spans(const std::vector<TextSpan>& spans) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float wrap = std::max(50.0f, ImGui::GetContentRegionAvail().x);
  const float line_h = ImGui::GetTextLineHeight() + 4;
  float x = 0, y = 0;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (const auto& s : spans) {
    std::string shown;
    for (char c : s.text) shown += c == '\n' ? ' ' : c;  // one chip per token, newlines shown as spaces
    const ImVec2 size = ImGui::CalcTextSize(shown.c_str());
    const float w = size.x + 4;
    if (x > 0 && x + w > wrap) x = 0, y += line_h;
    const ImVec2 a(origin.x + x, origin.y + y), b(a.x + w, a.y + line_h - 2);
    const float lum = 0.299f * s.background.r + 0.587f * s.background.g + 0.114f * s.background.b;
    if (s.alpha > 0) dl->AddRectFilled(a, b, pack_rgba(s.background, s.alpha), 2.0f);
    const ImU32 text = s.alpha > 0.3f && lum > 0.55f ? IM_COL32(10, 10, 10, 255) : ImGui::GetColorU32(ImGuiCol_Text);
    dl->AddText(ImVec2(a.x + 2, a.y + 1), text, shown.c_str());
    if (!s.tooltip.empty() && ImGui::IsWindowHovered() && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y)
      ImGui::SetTooltip("%s", s.tooltip.c_str());
    x += w + 2;
  }
  ImGui::Dummy(ImVec2(wrap, y + line_h));
  plot_stats().points += static_cast<long long>(spans.size());
}

}  // namespace moxlab::viewer
