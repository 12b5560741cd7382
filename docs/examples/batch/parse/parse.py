def parse(text):
    return int(text)
