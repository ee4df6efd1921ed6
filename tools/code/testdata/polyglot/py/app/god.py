# A planted god file: thirty unrelated steps in one module.


def step_01(value):
    total = value + 1
    if total > 10:
        total -= 1
    scaled = total * 2
    shifted = scaled - 3
    label = 'step-1'
    parts = [label, str(shifted)]
    for k in range(2):
        parts.append(str(k * 1))
    joined = '-'.join(parts)
    size = len(joined) + 1
    limit = 3
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_02(value):
    total = value + 2
    if total > 20:
        total -= 2
    scaled = total * 3
    shifted = scaled - 4
    label = 'step-2'
    parts = [label, str(shifted)]
    for k in range(3):
        parts.append(str(k * 2))
    joined = '-'.join(parts)
    size = len(joined) + 2
    limit = 6
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_03(value):
    total = value + 3
    if total > 30:
        total -= 3
    scaled = total * 4
    shifted = scaled - 5
    label = 'step-3'
    parts = [label, str(shifted)]
    for k in range(4):
        parts.append(str(k * 3))
    joined = '-'.join(parts)
    size = len(joined) + 3
    limit = 9
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_04(value):
    total = value + 4
    if total > 40:
        total -= 4
    scaled = total * 5
    shifted = scaled - 6
    label = 'step-4'
    parts = [label, str(shifted)]
    for k in range(5):
        parts.append(str(k * 4))
    joined = '-'.join(parts)
    size = len(joined) + 4
    limit = 12
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_05(value):
    total = value + 5
    if total > 50:
        total -= 5
    scaled = total * 6
    shifted = scaled - 7
    label = 'step-5'
    parts = [label, str(shifted)]
    for k in range(1):
        parts.append(str(k * 5))
    joined = '-'.join(parts)
    size = len(joined) + 5
    limit = 15
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_06(value):
    total = value + 6
    if total > 60:
        total -= 6
    scaled = total * 7
    shifted = scaled - 8
    label = 'step-6'
    parts = [label, str(shifted)]
    for k in range(2):
        parts.append(str(k * 6))
    joined = '-'.join(parts)
    size = len(joined) + 6
    limit = 18
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_07(value):
    total = value + 7
    if total > 70:
        total -= 7
    scaled = total * 8
    shifted = scaled - 9
    label = 'step-7'
    parts = [label, str(shifted)]
    for k in range(3):
        parts.append(str(k * 7))
    joined = '-'.join(parts)
    size = len(joined) + 7
    limit = 21
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_08(value):
    total = value + 8
    if total > 80:
        total -= 8
    scaled = total * 9
    shifted = scaled - 10
    label = 'step-8'
    parts = [label, str(shifted)]
    for k in range(4):
        parts.append(str(k * 8))
    joined = '-'.join(parts)
    size = len(joined) + 8
    limit = 24
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_09(value):
    total = value + 9
    if total > 90:
        total -= 9
    scaled = total * 10
    shifted = scaled - 11
    label = 'step-9'
    parts = [label, str(shifted)]
    for k in range(5):
        parts.append(str(k * 9))
    joined = '-'.join(parts)
    size = len(joined) + 9
    limit = 27
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_10(value):
    total = value + 10
    if total > 100:
        total -= 10
    scaled = total * 11
    shifted = scaled - 12
    label = 'step-10'
    parts = [label, str(shifted)]
    for k in range(1):
        parts.append(str(k * 10))
    joined = '-'.join(parts)
    size = len(joined) + 10
    limit = 30
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_11(value):
    total = value + 11
    if total > 110:
        total -= 11
    scaled = total * 12
    shifted = scaled - 13
    label = 'step-11'
    parts = [label, str(shifted)]
    for k in range(2):
        parts.append(str(k * 11))
    joined = '-'.join(parts)
    size = len(joined) + 11
    limit = 33
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_12(value):
    total = value + 12
    if total > 120:
        total -= 12
    scaled = total * 13
    shifted = scaled - 14
    label = 'step-12'
    parts = [label, str(shifted)]
    for k in range(3):
        parts.append(str(k * 12))
    joined = '-'.join(parts)
    size = len(joined) + 12
    limit = 36
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_13(value):
    total = value + 13
    if total > 130:
        total -= 13
    scaled = total * 14
    shifted = scaled - 15
    label = 'step-13'
    parts = [label, str(shifted)]
    for k in range(4):
        parts.append(str(k * 13))
    joined = '-'.join(parts)
    size = len(joined) + 13
    limit = 39
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_14(value):
    total = value + 14
    if total > 140:
        total -= 14
    scaled = total * 15
    shifted = scaled - 16
    label = 'step-14'
    parts = [label, str(shifted)]
    for k in range(5):
        parts.append(str(k * 14))
    joined = '-'.join(parts)
    size = len(joined) + 14
    limit = 42
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_15(value):
    total = value + 15
    if total > 150:
        total -= 15
    scaled = total * 16
    shifted = scaled - 17
    label = 'step-15'
    parts = [label, str(shifted)]
    for k in range(1):
        parts.append(str(k * 15))
    joined = '-'.join(parts)
    size = len(joined) + 15
    limit = 45
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_16(value):
    total = value + 16
    if total > 160:
        total -= 16
    scaled = total * 17
    shifted = scaled - 18
    label = 'step-16'
    parts = [label, str(shifted)]
    for k in range(2):
        parts.append(str(k * 16))
    joined = '-'.join(parts)
    size = len(joined) + 16
    limit = 48
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_17(value):
    total = value + 17
    if total > 170:
        total -= 17
    scaled = total * 18
    shifted = scaled - 19
    label = 'step-17'
    parts = [label, str(shifted)]
    for k in range(3):
        parts.append(str(k * 17))
    joined = '-'.join(parts)
    size = len(joined) + 17
    limit = 51
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_18(value):
    total = value + 18
    if total > 180:
        total -= 18
    scaled = total * 19
    shifted = scaled - 20
    label = 'step-18'
    parts = [label, str(shifted)]
    for k in range(4):
        parts.append(str(k * 18))
    joined = '-'.join(parts)
    size = len(joined) + 18
    limit = 54
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_19(value):
    total = value + 19
    if total > 190:
        total -= 19
    scaled = total * 20
    shifted = scaled - 21
    label = 'step-19'
    parts = [label, str(shifted)]
    for k in range(5):
        parts.append(str(k * 19))
    joined = '-'.join(parts)
    size = len(joined) + 19
    limit = 57
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_20(value):
    total = value + 20
    if total > 200:
        total -= 20
    scaled = total * 21
    shifted = scaled - 22
    label = 'step-20'
    parts = [label, str(shifted)]
    for k in range(1):
        parts.append(str(k * 20))
    joined = '-'.join(parts)
    size = len(joined) + 20
    limit = 60
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_21(value):
    total = value + 21
    if total > 210:
        total -= 21
    scaled = total * 22
    shifted = scaled - 23
    label = 'step-21'
    parts = [label, str(shifted)]
    for k in range(2):
        parts.append(str(k * 21))
    joined = '-'.join(parts)
    size = len(joined) + 21
    limit = 63
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_22(value):
    total = value + 22
    if total > 220:
        total -= 22
    scaled = total * 23
    shifted = scaled - 24
    label = 'step-22'
    parts = [label, str(shifted)]
    for k in range(3):
        parts.append(str(k * 22))
    joined = '-'.join(parts)
    size = len(joined) + 22
    limit = 66
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_23(value):
    total = value + 23
    if total > 230:
        total -= 23
    scaled = total * 24
    shifted = scaled - 25
    label = 'step-23'
    parts = [label, str(shifted)]
    for k in range(4):
        parts.append(str(k * 23))
    joined = '-'.join(parts)
    size = len(joined) + 23
    limit = 69
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_24(value):
    total = value + 24
    if total > 240:
        total -= 24
    scaled = total * 25
    shifted = scaled - 26
    label = 'step-24'
    parts = [label, str(shifted)]
    for k in range(5):
        parts.append(str(k * 24))
    joined = '-'.join(parts)
    size = len(joined) + 24
    limit = 72
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_25(value):
    total = value + 25
    if total > 250:
        total -= 25
    scaled = total * 26
    shifted = scaled - 27
    label = 'step-25'
    parts = [label, str(shifted)]
    for k in range(1):
        parts.append(str(k * 25))
    joined = '-'.join(parts)
    size = len(joined) + 25
    limit = 75
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_26(value):
    total = value + 26
    if total > 260:
        total -= 26
    scaled = total * 27
    shifted = scaled - 28
    label = 'step-26'
    parts = [label, str(shifted)]
    for k in range(2):
        parts.append(str(k * 26))
    joined = '-'.join(parts)
    size = len(joined) + 26
    limit = 78
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_27(value):
    total = value + 27
    if total > 270:
        total -= 27
    scaled = total * 28
    shifted = scaled - 29
    label = 'step-27'
    parts = [label, str(shifted)]
    for k in range(3):
        parts.append(str(k * 27))
    joined = '-'.join(parts)
    size = len(joined) + 27
    limit = 81
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_28(value):
    total = value + 28
    if total > 280:
        total -= 28
    scaled = total * 29
    shifted = scaled - 30
    label = 'step-28'
    parts = [label, str(shifted)]
    for k in range(4):
        parts.append(str(k * 28))
    joined = '-'.join(parts)
    size = len(joined) + 28
    limit = 84
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_29(value):
    total = value + 29
    if total > 290:
        total -= 29
    scaled = total * 30
    shifted = scaled - 31
    label = 'step-29'
    parts = [label, str(shifted)]
    for k in range(5):
        parts.append(str(k * 29))
    joined = '-'.join(parts)
    size = len(joined) + 29
    limit = 87
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result

def step_30(value):
    total = value + 30
    if total > 300:
        total -= 30
    scaled = total * 31
    shifted = scaled - 32
    label = 'step-30'
    parts = [label, str(shifted)]
    for k in range(1):
        parts.append(str(k * 30))
    joined = '-'.join(parts)
    size = len(joined) + 30
    limit = 90
    if size > limit:
        size = limit
    result = (shifted, joined, size)
    return result
