# Report b.


def report_b(rows):
    total = 0
    count = 0
    for row in rows:
        if row.get("skip"):
            continue
        total += row["amount"]
        count += 1
    average = total / count if count else 0
    return {"total": total, "count": count, "average": average}
