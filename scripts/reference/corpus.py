"""The small training corpus for the fixture tokenizer, generated (not downloaded), a few KB.

Arithmetic prompts and answers, short sentences about tools and answers, and chat-like turns
without the special tokens (those are added tokens and never trained on).
"""

import random

_SENTENCES = [
    "The tool returns the answer as a number.",
    "Call the calculator when the sum is large.",
    "The agent reads the question, thinks, and answers.",
    "A good answer is short and correct.",
    "Use the search tool to find the weather in Paris.",
    "The result of the tool call is shown to the model.",
    "If the tool fails, the agent should try again.",
    "The reward is one when the answer is right and zero otherwise.",
    "Policies that answer well get a higher reward.",
    "The model writes a tool call, then waits for the result.",
    "Numbers are read one digit at a time.",
    "Tell me the time in Tokyo, please.",
    "The weather today is sunny with a light wind.",
    "Thanks! That is the right answer.",
    "I will use the add tool to compute it.",
    "Let me think about the question first.",
]

_TOOLS = ["add", "multiply", "search", "weather", "calculator", "lookup"]


def build(seed=7):
    rng = random.Random(seed)
    texts = []
    for _ in range(60):
        a, b = rng.randint(0, 99), rng.randint(0, 99)
        op, val = rng.choice([("+", a + b), ("-", a - b), ("*", a * b)])
        texts.append(f"What is {a} {op} {b}? The answer is {val}.")
        texts.append(f"user\n{a} {op} {b} =\nassistant\n{val}\n")
    for _ in range(3):
        texts.extend(_SENTENCES)
    for _ in range(20):
        tool = rng.choice(_TOOLS)
        a, b = rng.randint(0, 50), rng.randint(0, 50)
        texts.append(f'assistant\n{{"name": "{tool}", "arguments": {{"a": {a}, "b": {b}}}}}\n')
        texts.append(f"tool\n{a + b}\nassistant\nThe answer is {a + b}.\n")
        texts.append(f"system\nYou are a helpful assistant. You can call the {tool} tool.\n")
    return texts
