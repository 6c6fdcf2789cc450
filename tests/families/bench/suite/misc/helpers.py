"""Not a reference: a helper module next to the suite, which bench must skip with a note."""


def scale(values, factor):
    return [v * factor for v in values]
