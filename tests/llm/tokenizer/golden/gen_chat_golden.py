#!/usr/bin/env python3
# gen_chat_golden.py: renders the chat templates stored in the tokenizer fixtures with Jinja2
# (the reference renderer), writing golden/chat/<vocabulary>/<case>.txt.
# Usage: python3 gen_chat_golden.py [fixtures-dir]   (default: ../../../../../shared/fixtures)
import os
import struct
import sys

import jinja2
import jinja2.sandbox

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, '../../../../../shared/fixtures')

SCALARS = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}


def read_metadata(path):
    """The GGUF key/value section (spec: ggml docs/gguf.md), enough to reach the template."""
    with open(path, 'rb') as f:
        def read(fmt):
            return struct.unpack('<' + fmt, f.read(struct.calcsize('<' + fmt)))[0]

        def read_string():
            return f.read(read('Q')).decode('utf-8')

        def read_value(kind):
            if kind in SCALARS:
                return read(SCALARS[kind])
            if kind == 8:
                return read_string()
            element, count = read('I'), read('Q')
            return [read_value(element) for _ in range(count)]

        assert f.read(4) == b'GGUF'
        read('I')
        read('Q')
        metadata = {}
        for _ in range(read('Q')):
            key = read_string()
            metadata[key] = read_value(read('I'))
        return metadata


CONVERSATION = [
    {'role': 'system', 'content': 'Be brief.'},
    {'role': 'user', 'content': 'Hi'},
    {'role': 'assistant', 'content': 'Hello!'},
    {'role': 'user', 'content': 'Bye'},
]
CASES = {
    'hi': ([{'role': 'user', 'content': 'Hi'}], {}),
    'conversation': (CONVERSATION, {}),
    'conversation_no_prompt': (CONVERSATION, {'add_generation_prompt': False}),
    'whitespace': ([{'role': 'user', 'content': '  Hello there \n'}], {}),
}
QWEN3_CASES = {
    'thinking_history': ([
        {'role': 'user', 'content': 'Q1'},
        {'role': 'assistant', 'content': '<think>\nhmm\n</think>\n\nA1'},
        {'role': 'user', 'content': 'Q2'},
        {'role': 'assistant', 'content': '<think>\nr2\n\n</think>\nA2'},
    ], {'add_generation_prompt': False}),
    'no_thinking': ([{'role': 'user', 'content': 'Hi'}], {'enable_thinking': False}),
    'tool_turns': ([
        {'role': 'user', 'content': 'Weather?'},
        {'role': 'assistant', 'content': 'Checking.'},
        {'role': 'tool', 'content': '{"t": 20}'},
        {'role': 'tool', 'content': '{"t": 21}'},
    ], {}),
}


def render(template, bos, eos, messages, extra):
    # Hugging Face's apply_chat_template environment settings.
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env.globals['raise_exception'] = raise_exception
    args = {'messages': messages, 'bos_token': bos, 'eos_token': eos, 'add_generation_prompt': True}
    args.update(extra)
    return env.from_string(template).render(**args)


def main():
    for name in ['llama-bpe', 'qwen2']:
        meta = read_metadata(os.path.join(FIXTURES, 'tokenizer', 'ggml-vocab-%s.gguf' % name))
        tokens = meta['tokenizer.ggml.tokens']
        adds_bos = meta.get('tokenizer.ggml.add_bos_token', True)
        bos = tokens[meta['tokenizer.ggml.bos_token_id']] if adds_bos and 'tokenizer.ggml.bos_token_id' in meta else ''
        eos = tokens[meta['tokenizer.ggml.eos_token_id']]
        cases = dict(CASES, **(QWEN3_CASES if name == 'qwen2' else {}))
        out_dir = os.path.join(HERE, 'chat', name)
        os.makedirs(out_dir, exist_ok=True)
        for case, (messages, extra) in cases.items():
            text = render(meta['tokenizer.chat_template'], bos, eos, messages, extra)
            with open(os.path.join(out_dir, case + '.txt'), 'w', encoding='utf-8', newline='') as f:
                f.write(text)


if __name__ == '__main__':
    main()
