// expect: tg::sym: variable names are at most 23 characters
// sym_name_too_long.cpp: a symbolic variable with a 24-character name.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<tg::sym<"sequence_length_in_token", 1, 8>>);
