from parse import parse

assert parse("2.5") == 2.5
assert parse("7") == 7
print("ok")
