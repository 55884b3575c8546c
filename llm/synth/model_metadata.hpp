// model_metadata.hpp: the GGUF keys a loader reads for each architecture (gguf-py/gguf/constants.py: Keys).
#pragma once
#include "llm/gguf/gguf_writer.hpp"
#include "llm/synth/model_spec.hpp"
#include "llm/synth/vocabulary.hpp"

namespace tg::synth {

// Adds general.*, the ARCH.* hyperparameters, the vocabulary's tokenizer.* keys and
// ARCH.vocab_size, in the order llama.cpp's converter writes them.
void add_model_metadata(gguf::writer& w, const model_spec& spec, const vocabulary& vocab);

}  // namespace tg::synth
