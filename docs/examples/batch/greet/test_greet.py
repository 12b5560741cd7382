from greet import greet

assert greet("ada") == "Hello, Ada!", greet("ada")
print("ok")
