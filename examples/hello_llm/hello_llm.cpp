// hello_llm.cpp: tg's LLM library in a program of its own: generate text from a GGUF model.
//   c++ hello_llm.cpp $(pkg-config --cflags --libs tg-llm) -o hello_llm && ./hello_llm model.gguf "Once upon a time"
#include <iostream>
#include <tg/llm/llm.hpp>

int main(int argc, char** argv) try {
  if (argc < 2) return std::cerr << "usage: hello_llm model.gguf [prompt]\n", 2;
  auto model = tg::llm::model::open(argv[1], {.max_context = 512});
  tg::llm::session session(model);
  auto prompt = model.tokenize(argc > 2 ? argv[2] : "Once upon a time");
  auto result = session.generate(prompt, {.max_tokens = 32}, [](tg::llm::token_id, std::string_view text) {
    std::cout << text << std::flush;
    return true;  // false stops generation
  });
  std::cout << "\n[" << result.tokens.size() << " tokens]\n";
} catch (const std::exception& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
