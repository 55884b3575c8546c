// chat_page.hpp: the chat page the server answers at `/`: one self-contained HTML file
// (chat_page.html, compiled in by scripts/embed_text.py; no CDN, works offline).
#pragma once
#include <string_view>

namespace tg::serve {

std::string_view chat_page_html();

}  // namespace tg::serve
