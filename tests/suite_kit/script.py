"""The script a real-client suite writes into a prompt for its scripted model, one line
(after the prompt's words, or on a line of its own):

    @script [{"tool": "NAME", "input": {...}}, {"say": "TEXT"}]

and what a step's input may name that only the model would know: `$newest-message-id`
(the id of the newest cross-session message it was given) and `$one-mebibyte` (1 MiB of
text, more than a command line carries). Every scripted endpoint reads scripts here;
each knows only how its harness's API holds a conversation's texts."""

import json

SCRIPT_MARK = "@script "
NEWEST_MESSAGE_ID = "$newest-message-id"
ONE_MEBIBYTE = "$one-mebibyte"


def newest_script(items, is_prompt, texts_of):
    """The newest script among the conversation's `items` that `is_prompt` picks (the
    person's messages, what a hook gave the model), and the items after it; (None, [])
    when there is none. `texts_of(item)` are an item's texts."""
    for index in range(len(items) - 1, -1, -1):
        if not is_prompt(items[index]):
            continue
        for text in texts_of(items[index]):
            for line in text.splitlines():
                # A frame's header names its sender by title, which may quote the
                # sender's own script: never this model's.
                if SCRIPT_MARK in line and not line.startswith("from-session: "):
                    script = line[line.index(SCRIPT_MARK) + len(SCRIPT_MARK):]
                    return json.loads(script), items[index + 1:]
    return None, []


def resolved(value, texts):
    """A step's input as the model would write it: `$newest-message-id` replaced by the
    id on the last frame's `message-id:` line among `texts` (everything the model was
    given, in order), `$one-mebibyte` by 1 MiB of text."""
    if isinstance(value, dict):
        return {key: resolved(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item, texts) for item in value]
    if value == ONE_MEBIBYTE:
        return ("a line of a very long message\n" * 40000)[:1 << 20]
    if value != NEWEST_MESSAGE_ID:
        return value
    newest = None
    for text in texts:
        for line in text.splitlines():
            if line.startswith("message-id: m-"):
                newest = line[len("message-id: "):]
    return newest or value
