"""Writes function-calling records shaped like glaive-function-calling-v2's,
made up from a fixed seed, so a workload can be tried end to end without
the data set: a system prompt that lists one to three functions as JSON
schemas, a user request, and the assistant's function call, the
function's response and the assistant's answer from it (or, for one
request in five, a plain reply when no function fits).

  python3 scripts/data/glaive_records.py OUT.jsonl [--records N] [--seed S] [--shape template|chat]

--shape template (the default) writes instruction, input and output
fields, the record shape the reference exercise's template reads (the
call in the data set's <functioncall> form, then FUNCTION RESPONSE and
the answer); chat writes OpenAI-style messages (system, user, assistant
with tool_calls, tool, assistant) and tools. The same
seed and count always write the same bytes.
"""

import argparse
import json
import os
import random

CITIES = ["Tokyo", "Paris", "Lagos", "Lima", "Oslo", "Cairo", "Seoul", "Denver", "Perth", "Quito", "Hanoi", "Tunis"]
CURRENCIES = ["USD", "EUR", "JPY", "GBP", "INR", "BRL", "CHF", "KRW"]
FOODS = ["lentil soup", "paella", "ramen", "falafel", "risotto", "tacos", "pho", "goulash"]
NAMES = ["Ada", "Bashir", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun"]

FUNCTIONS = [
    {"name": "get_weather", "description": "Get the current weather for a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city name"},
                                                     "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                    "required": ["city"]}},
    {"name": "convert_currency", "description": "Convert an amount from one currency to another",
     "parameters": {"type": "object", "properties": {"amount": {"type": "number", "description": "The amount to convert"},
                                                     "from": {"type": "string", "description": "The currency to convert from"},
                                                     "to": {"type": "string", "description": "The currency to convert to"}},
                    "required": ["amount", "from", "to"]}},
    {"name": "search_recipes", "description": "Search for recipes by dish or ingredient",
     "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "The dish or ingredient"},
                                                     "max_results": {"type": "integer", "description": "How many recipes to return"}},
                    "required": ["query"]}},
    {"name": "send_email", "description": "Send an email to a recipient",
     "parameters": {"type": "object", "properties": {"to": {"type": "string", "description": "The recipient's address"},
                                                     "subject": {"type": "string", "description": "The subject line"},
                                                     "body": {"type": "string", "description": "The message"}},
                    "required": ["to", "subject", "body"]}},
    {"name": "calculate_loan_payment", "description": "Calculate the monthly payment of a loan",
     "parameters": {"type": "object", "properties": {"principal": {"type": "number", "description": "The loan amount"},
                                                     "annual_rate": {"type": "number", "description": "The yearly interest rate in percent"},
                                                     "months": {"type": "integer", "description": "The loan term in months"}},
                    "required": ["principal", "annual_rate", "months"]}},
]


def request(rng, name):
    """A user request for function `name`, and the arguments it implies."""
    if name == "get_weather":
        city = rng.choice(CITIES)
        return f"What's the weather like in {city} right now?", {"city": city}
    if name == "convert_currency":
        amount, a, b = rng.randint(5, 5000), *rng.sample(CURRENCIES, 2)
        return f"How much is {amount} {a} in {b}?", {"amount": amount, "from": a, "to": b}
    if name == "search_recipes":
        food, n = rng.choice(FOODS), rng.randint(1, 5)
        return f"Can you find me {n} recipes for {food}?", {"query": food, "max_results": n}
    if name == "send_email":
        who = rng.choice(NAMES)
        subject = rng.choice(["Meeting tomorrow", "Invoice", "Weekend plans", "Project update"])
        body = f"Hi {who}, " + rng.choice(["see you at ten.", "the invoice is attached.", "are you free on Saturday?", "the draft is ready for review."])
        return f"Please email {who.lower()}@example.com with the subject '{subject}' saying: {body}", \
            {"to": f"{who.lower()}@example.com", "subject": subject, "body": body}
    principal, rate, months = rng.randint(2, 90) * 1000, rng.choice([3.5, 4.25, 5.0, 6.75]), rng.choice([12, 36, 60, 120])
    return f"I want to borrow ${principal} at {rate}% a year for {months} months. What would I pay each month?", \
        {"principal": principal, "annual_rate": rate, "months": months}


def response(rng, name, args):
    """What the function returned, and the assistant's answer from it."""
    if name == "get_weather":
        t, sky = rng.randint(-5, 35), rng.choice(["sunny", "cloudy", "raining", "windy"])
        return {"temperature": t, "unit": "celsius", "conditions": sky}, f"It is {t} degrees Celsius and {sky} in {args['city']} right now."
    if name == "convert_currency":
        v = round(args["amount"] * rng.uniform(0.01, 150), 2)
        return {"converted_amount": v, "currency": args["to"]}, f"{args['amount']} {args['from']} is about {v} {args['to']}."
    if name == "search_recipes":
        found = [f"{args['query'].title()} No. {i + 1}" for i in range(args["max_results"])]
        return {"recipes": found}, "Here is what I found: " + ", ".join(found) + "."
    if name == "send_email":
        return {"status": "sent"}, f"Your email to {args['to']} has been sent."
    p, r, n = args["principal"], args["annual_rate"] / 1200, args["months"]
    pay = round(p * r / (1 - (1 + r) ** -n), 2)
    return {"monthly_payment": pay}, f"Your monthly payment would be ${pay}."


def record(rng, shape):
    offered = rng.sample(FUNCTIONS, rng.randint(1, 3))
    system = "You are a helpful assistant with access to the following functions. Use them if required -\n" + \
        "\n".join(json.dumps(f, indent=4) for f in offered)
    if rng.random() < 0.8:
        name = rng.choice(offered)["name"]
        user, args = request(rng, name)
        call = {"name": name, "arguments": args}
        answer = "<functioncall> " + json.dumps(call)
        result, reply = response(rng, name, args)
    else:
        user = rng.choice(["Can you tell me a joke?", "What is the capital of Peru?", "Thanks, that is all for today."])
        answer = "I'm sorry, none of the functions I have can help with that, but I'm happy to talk it through."
        call = None
    if shape == "template":
        if call is not None:
            answer += "\nFUNCTION RESPONSE: " + json.dumps(result) + "\n" + reply
        return {"instruction": system, "input": user, "output": answer}
    messages = [{"role": "system", "content": system.split(" -\n")[0]}, {"role": "user", "content": user}]
    if call is None:
        messages.append({"role": "assistant", "content": answer})
    else:
        messages += [{"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": call}]},
                     {"role": "tool", "content": json.dumps(result)}, {"role": "assistant", "content": reply}]
    return {"messages": messages, "tools": [{"type": "function", "function": f} for f in offered]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--records", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", choices=["template", "chat"], default="template")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".partial"
    with open(tmp, "w", encoding="utf-8") as f:
        for _ in range(a.records):
            f.write(json.dumps(record(rng, a.shape), ensure_ascii=False) + "\n")
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
