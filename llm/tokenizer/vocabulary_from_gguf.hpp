// vocabulary_from_gguf.hpp: reads a tokenizer's vocabulary from GGUF metadata (gguf-py/gguf/constants.py: Keys).
#pragma once
#include "llm/gguf/gguf_file.hpp"
#include "llm/tokenizer/vocabulary.hpp"

namespace tg::tokenizer {

// Copies tokenizer.ggml.* and tokenizer.chat_template out of the file. Keys the file lacks
// stay unset, so the tokenizer applies llama.cpp's defaults. Throws usage_error when the
// vocabulary keys are missing or have the wrong type.
vocabulary vocabulary_from_gguf(const tg::gguf::file& file);

}  // namespace tg::tokenizer
