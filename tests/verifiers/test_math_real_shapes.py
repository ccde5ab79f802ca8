"""The answer shapes real models write, each read and compared as one answer.

Examples are our own, written in the shapes seen in open instruct models' completions; the
property tests hold the new fallbacks and fast paths to what a final answer and math-verify say.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import math as math_verifier
from referee.verifiers.math_answers import CompareOptions, exact_elements
from referee.verifiers.math_extract import extract_answer

COT = "Let us work it out. First, 3 + 4 = 7 and we keep 7 aside.\n\n"

# (completion, gold, expected status, rule that reads the answer)
GOLDEN = [
    # Bare answers: golden files, stripped <answer> tags, terse models
    ("42", "42", "correct", "bare"),
    ("0.5", r"\frac{1}{2}", "correct", "bare"),
    (r"\frac{1}{2}", "0.5", "correct", "bare"),
    ("(1,2)", "(1, 2)", "correct", "bare"),
    ("x^2+2x+1", "(x+1)^2", "correct", "bare"),
    (r"\text{odd}", "odd", "correct", "bare"),
    ("E", r"\textbf{E}", "correct", "bare"),
    (r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}", r"\begin{bmatrix}1&0\\0&1\end{bmatrix}", "correct", "bare"),
    ("28 percent", r"28\%", "correct", "bare"),
    ("28 pct", r"28\%", "correct", "bare"),
    ("43", "42", "wrong", "bare"),
    # Prose with no delimiter at all, in several languages
    ("So it took Maria 3 hours to paint the fence.", "3", "correct", "last number"),
    ("After removing the multiples, there are 75 whole numbers left.", "75", "correct", "last number"),
    ("Donc, le prix total est de 1000,50 euros.", "1000.50", "correct", "last number"),
    ("所以他一共走了 12 公里。", "12", "correct", "last number"),
    ("所以答案是15。", "15", "correct", "final answer"),  # 答案是: an answer marker
    ("इसलिए उत्तर ८ है।", "8", "correct", "last number"),
    ("لذلك فإن العدد هو ٤٥.", "45", "correct", "last number"),
    ("So it took Maria 4 hours to paint the fence.", "3", "wrong", "last number"),
    ("So 12.", "12", "correct", "last number"),
    # A hedge stays wrong, whichever alternative the gold is
    ("The answer is either 12 or 13.", "13", "wrong", "last number"),
    ("It could be 12, or maybe 13.", "12", "wrong", "last number"),
    ("Since n is 3 or larger, the total is 13.", "13", "correct", "last number"),
    (COT + r"So $\boxed{12}$ or $\boxed{13}$.", "13", "wrong", "boxed"),
    (COT + "The final answer is $12$ or $13$.", "12", "wrong", "final answer"),
    (COT + r"So $d = \boxed{2\frac{1}{4}}$, or $\boxed{\frac{9}{4}}$ inches.", r"\frac94", "correct", "boxed"),
    (COT + r"So $\boxed{\frac{1}{2}}$ or $\boxed{0.5}$.", "0.5", "correct", "boxed"),
    (COT + r"\boxed{f(x) = x \text{ or } f(x) = 2 - x}", "f(x)=x, f(x)=2-x", "correct", "boxed"),
    (COT + r"So $\boxed{f(x) = x}$ or $\boxed{f(x) = 2 - x}$.", "f(x)=x, f(x)=2-x", "correct", "boxed"),
    # The last maths is an equation or a sentence: its value
    (COT + r"The remaining amount is $200 - 45 - 55 = 100$.", "100", "correct", "math span"),
    (COT + r"\[\text{Area} = 36 \text{ square meters}\]", "36", "correct", "math span"),
    (COT + r"\[Total\ Cost = \$120 + \$180 = \$300.\]", "300", "correct", "math span"),
    (COT + "Final Answer: The smallest $k$ is 17.", "17", "correct", "final answer"),
    (COT + r"Hence the values are \(x = -3\), \(x = 1\), and \(x = 4\).", "-3,1,4", "correct", "math span"),
    (COT + r"So \(E(12, 5) = 31\) minutes are enough.", "31", "correct", "math span"),
    # Bold answers when nothing is boxed
    (COT + "The number of marbles left is **9**.", "9", "correct", "bold"),
    (COT + "**Answer:** Leo paid $12.50 for the tickets", "12.5", "correct", "final answer"),
    (COT + "**Step 2:** we add 5.\n\nSo the total is **12**, not 7.", "12", "correct", "bold"),
    (COT + "**Answer: $3,400**", "3400", "correct", "final answer"),
    ("**57**", "57", "correct", "bare"),
    # What is inside a box
    (COT + r"\boxed{$145,300}", "145300", "correct", "boxed"),
    (COT + r"\boxed{\$18}", "18", "correct", "boxed"),
    (COT + r"\boxed{\18}", "18", "correct", "boxed"),
    (COT + r"\boxed{6.0 \text{ cm}}", "6", "correct", "boxed"),
    (COT + r"\boxed{x = 9}", "9", "correct", "boxed"),
    (COT + r"\boxed{288 \, \text{cm}^2}", "288", "correct", "boxed"),
    (COT + r"\boxed{F(10, 3) = 12}", "12", "correct", "boxed"),
    # Several boxes that together are the answer
    (COT + r"So \(k\) is \(\boxed{-2}\) and \(\boxed{-7}\).", "-2,-7", "correct", "boxed"),
    (COT + r"\[\boxed{(1, 3)} \quad \text{and} \quad \boxed{(5, 3)}\]", "(1, 3), (5, 3)", "correct", "boxed"),
    (COT + r"So \(\boxed{-2}\) and \(\boxed{-7}\).", "-7", "wrong", "boxed"),
    (COT + r"The largest is \(\boxed{9}\), and the smallest possible value is \(\boxed{2}\).", "2,9", "correct", "boxed"),
    (COT + r"The largest is \(\boxed{9}\), and the smallest possible value is \(\boxed{2}\).", "2", "correct", "boxed"),
    (COT + r"\boxed{3}", r"\(\boxed{3}\) and \(\boxed{5}\).", "wrong", "boxed"),
    # Gold and answer forms
    (COT + r"\boxed{2 - \frac{1}{e}}", r"2 - \frac{1}{\mathrm{e}}", "correct", "boxed"),
    (COT + r"\boxed{\textbf{B}}", r"\mathrm{B}", "correct", "boxed"),
    (COT + r"\boxed{15}", "15\\", "correct", "boxed"),
    (COT + r"\boxed{15}", r"15\text{ units}", "correct", "boxed"),
    (COT + r"\boxed{\frac{\sqrt{3}}{3} \approx 0.577}", r"\frac{\sqrt3}{3}", "correct", "boxed"),
    (COT + r"\boxed{x \in [-3, 5]}", r"-3 \le x \le 5", "correct", "boxed"),
    (COT + r"\boxed{-3 \leq x < 5}", "[-3, 5)", "correct", "boxed"),
    (COT + r"\boxed{-3 \leq x \leq 5}", "[-3, 5)", "wrong", "boxed"),
    (COT + r"\boxed{m > 4}", r"(4, \infty)", "correct", "boxed"),
    ("2000,75", "2000.75", "correct", "bare"),
    ("0,125", "0.125", "correct", "bare"),
    ("3,000", "3000", "correct", "bare"),
    (COT + r"\boxed{7, 125}", "7125", "wrong", "boxed"),
    (COT + "The answer is (D). x = 12", "D", "correct", "final answer"),
    ("D. x = 12", "D", "correct", "bare"),
    ("B. x = 12", "D", "wrong", "bare"),
    (COT + r"\boxed{\textbf{(C) }12}", r"\text{(C)}", "correct", "boxed"),
    (COT + r"\boxed{\textbf{(B) }12}", r"\text{(C)}", "wrong", "boxed"),
    (COT + r"\boxed{g(t) = t^2 + 1}", "g(s)=s^2+1", "correct", "boxed"),
    (COT + r"\boxed{\{6, 2\}}", "2, 6", "correct", "boxed"),
    (COT + r"\boxed{(2, 1), (0, 0)}", "(0,0),(2,1)", "correct", "boxed"),
    (COT + r"\boxed{(2, 1), (0, 1)}", "(0,0),(2,1)", "wrong", "boxed"),
    (COT + r"\boxed{5 \text{ and } -1}", "-1, 5", "correct", "boxed"),
    (COT + r"\boxed{4}", "k=4", "correct", "boxed"),
    (COT + r"\boxed{3, -5}", "a=3, a=-5", "correct", "boxed"),
    (COT + r"\boxed{\frac{x+1}{2}}", r"g(x)=\frac{x+1}{2}", "correct", "boxed"),
    (COT + r"\boxed{\pm 2, \pm 5}", "2,-2,5,-5", "correct", "boxed"),
    (COT + r"\boxed{\pm 2}", "2", "wrong", "boxed"),
    (COT + r"\boxed{(9*√3)/2}", r"\frac{9\sqrt{3}}{2}", "correct", "boxed"),
    (COT + r"\boxed{\text{No real solutions}}", "(1, 2), (3, 4)", "wrong", "boxed"),
    # Vectors written as tuples, against a column or row matrix of the same entries
    (COT + r"So the result is \(\boxed{(-4, 7, 15)}\).", r"\begin{pmatrix} -4 \\ 7 \\ 15 \end{pmatrix}", "correct", "boxed"),
    (COT + r"\boxed{\left(\frac{1}{2}, -3\right)}", r"\begin{pmatrix} 1/2 \\ -3 \end{pmatrix}", "correct", "boxed"),
    (COT + r"\boxed{\langle 2, 0, -1 \rangle}", r"\begin{pmatrix} 2 \\ 0 \\ -1 \end{pmatrix}", "correct", "boxed"),
    (COT + r"\boxed{\begin{pmatrix} 5 & 6 \end{pmatrix}}", "(5, 6)", "correct", "boxed"),
    (COT + r"\boxed{(7, -4, 15)}", r"\begin{pmatrix} -4 \\ 7 \\ 15 \end{pmatrix}", "wrong", "boxed"),
    (COT + r"\boxed{(-4, 7)}", r"\begin{pmatrix} -4 \\ 7 \\ 15 \end{pmatrix}", "wrong", "boxed"),
    (COT + r"\boxed{(1, 2, 3, 4)}", r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", "wrong", "boxed"),
    # Units in the box: rates, a single letter, parentheses, the number inside the text
    (COT + r"\boxed{45 \text{ km/h}}", "45", "correct", "boxed"),
    (COT + r"\boxed{50 \text{ m}^2}", "50", "correct", "boxed"),
    (COT + r"\boxed{50 \text{ m}^2}", "5", "wrong", "boxed"),
    (COT + r"\boxed{16 \text{ (years)}}", "16", "correct", "boxed"),
    (COT + r"\boxed{\text{9 days}}", "9", "correct", "boxed"),
    (COT + r"\boxed{\text{8 days}}", "9", "wrong", "boxed"),
    (COT + r"\boxed{\text{C}}", r"\text{(C)}", "correct", "boxed"),
    # LaTeX escaped twice (a JSON round trip too many)
    (COT + r"so \\boxed{\\dfrac{3}{8}}", "0.375", "correct", "boxed"),
    (COT + r"so \\boxed{\\dfrac{3}{7}}", "0.375", "wrong", "boxed"),
    (r"$-3 \\le x \\le 4$", r"x \in [-3, 4]", "correct", "bare"),
    (r"\begin{pmatrix} 1 \\x \end{pmatrix}", r"\begin{pmatrix} 1 \\ x \end{pmatrix}", "correct", "bare"),
    # Remarks after an unboxed answer: a check, a justification, a parenthetical, a rounding
    (COT + "So $x = 17$. Let's check: $(7 + 2 + 17 + 10)/4 = 9$.", "17", "correct", "math span"),
    (COT + "So $x = 16$. Let's check: $(7 + 2 + 16 + 10)/4 = 8.75$.", "8.75", "wrong", "math span"),
    (COT + r"So $\log_3 81 = 4$ because $3^4 = 81$.", "4", "correct", "math span"),
    (COT + r"Thus \(x = 2\). (Check: \(2^{2 \cdot 2} = 16\) and \(\sqrt{256} = 16\).)", "2", "correct", "math span"),
    (COT + "So the serum grows 8 new limbs (5 arms and 3 legs).", "8", "correct", "last number"),
    (COT + "There are 5 sandwiches left. (Cody ate 4 and Trevor ate 3.)", "5", "correct", "last number"),
    (COT + r"The probability is \(\frac{1}{3}\), or about 33.3%.", r"\frac{1}{3}", "correct", "math span"),
    (COT + "So 21 melons were left. This makes sense because 36 + 63 + 21 = 120.", "21", "correct", "last number"),
    (COT + r"So the digit is \(N = 6\), and indeed \(214206 = 6 \times 35701\).", "6", "correct", "math span"),
    (COT + "The remainder is 0, since 54 = 6 × 9.", "0", "correct", "last number"),
    (COT + r"We get $x = -3$ or $x = 3$. Since $x > 0$, $x = 3$.", "3", "correct", "math span"),
    (COT + r"Since $2x = 6$, we get $x = 4$.", "6", "wrong", "math span"),
    (COT + "So it is 10. Therefore, the answer is 12 because the check fails.", "12", "correct", "final answer"),
    # Cut off at the length limit before any final answer: the last value met is no answer
    (COT + r"so the numerator is \( 5 \cdot 80 = 400 \), giving \( \frac{400}{4} = 100", "100", "no_answer", None),
    (COT + r"and the set is $(2,12) \cup (12,102)", r"(2,12) \cup (12,102)", "no_answer", None),
    (COT + "Sum: \\(14 + 9 + 8 = 31\\)\n\nTherefore, the", "31", "no_answer", None),
    (COT + "We need $f(5) - 1$ first. Since $f(5) = 7$", "7", "no_answer", None),
    (COT + "Money: 9 * 2 = 18", "18", "correct", "last number"),
    (COT + "When multiplying: $x = 18$", "18", "correct", "math span"),
    (COT + "Le total est 2,74 $", "2.74", "correct", "last number"),
    (COT + r"Thus \(\boxed{100}\) and the check gives \(400/4 =", "100", "correct", "boxed"),
    # What follows a remark can correct the answer: then nothing is cut
    (COT + "So x = 5. Let's verify: 2(5)+1 = 11, not 13. So x = 6.", "6", "correct", "last number"),
    (COT + "Hmm, x = 3 is impossible since then y < 0, so x = 5.", "5", "correct", "last number"),
    (COT + "x = 3 would fail because 3 is odd, so we take x = 4.", "4", "correct", "last number"),
    (COT + r"She makes \(9 \times 2 = 18\). (She keeps \(16 - 3 - 4 = 9\) eggs.)", "18", "correct", "math span"),
    (COT + r"leaving \(16 - 3 - 4 = 9\), so she makes \(9 \times 2 = 18\).", "18", "correct", "math span"),
    # A value leading an answer sentence: an elaboration only, never a hypothesis or a correction
    (COT + "Suppose the answer is 4, then 4^2 = 16 which is too big. So x = 3.", "3", "correct", "last number"),
    (COT + "The answer is 3; no wait, it is 5.", "3", "wrong", "last number"),
    (COT + "The answer is 3, or maybe 5.", "3", "wrong", "last number"),
    # Ends that look unfinished but are not
    (COT + "So the total is 18 dollars.\n\n---", "18", "correct", "last number"),
    (COT + "Now the total is 42", "42", "correct", "last number"),
    # Constants and scale words are never units; "or" in a gold lists both
    (COT + r"\boxed{3\,\mathrm{i}}", "3", "wrong", "boxed"),
    (COT + r"\boxed{2}", r"2\mathrm{e}", "wrong", "boxed"),
    (COT + r"\boxed{\text{2 dozen}}", "2", "wrong", "boxed"),
    (COT + r"\boxed{1 \text{ or } 2}", r"1 \text{ or } 2", "correct", "boxed"),
    (COT + r"\boxed{2}", r"1 \text{ or } 2", "wrong", "boxed"),
    ("$x < 2$ or $x > 3$", r"(-\infty,2)\cup(3,\infty)", "correct", "bare"),
    (COT + r"\boxed{x<2 \text{ or } y>3}", r"(-\infty,2)\cup(3,\infty)", "wrong", "boxed"),
    (COT + r"$[0,2]$ or $[0,3]$", "[0,3]", "wrong", "math span"),
    (COT + r"\boxed{\phi > x}", r"x < \phi", "correct", "boxed"),
    # A bold sentence that closes the text states the answer, not an earlier bold number
    (COT + "which is **7** values.\n\nSo the total is \\[ 9 \\times 7 = 63 \\]\n\n**There are 63 points inside.**", "63",
     "correct", "bold"),
    (COT + "which is **7** values.\n\n**There are 62 points inside.**", "63", "wrong", "bold"),
    # A last number that only qualifies the answer before it
    (COT + "So, Davos paid $36 for the 2 shirts.", "36", "correct", "last number"),
    (COT + "So, Davos paid $38 for the 2 shirts.", "36", "wrong", "last number"),
    (COT + "The crocodile will grow 26 inches in 13 years.", "26", "correct", "last number"),
    (COT + "Allen will be 109 years old 10 years from now.", "109", "correct", "last number"),
    (COT + "So she has 5 + 3 = 8 apples in 2 bags.", "8", "correct", "last number"),
    (COT + "It takes 4 hours.", "4", "correct", "last number"),
    (COT + "So the sisters need to go from 64 to 100.", "100", "correct", "last number"),
    # Answer phrases: a word after a colon, a choice, a value leading a longer sentence
    (COT + "Because h(-x) = h(x), the function is even.\n\nThe answer is: even", r"\text{even}", "correct", "final answer"),
    (COT + "It is not a cylinder. The correct option is (C) Plane.", r"\text{(C)}", "correct", "final answer"),
    (COT + "It is not a cylinder. The correct option is (B) Cylinder.", r"\text{(C)}", "wrong", "final answer"),
    (COT + r"The answer is 1, no matter how large the exponent $2^{1000}$ is.", "1", "correct", "final answer"),
    (COT + r"The answer is 7, which is prime.", "7", "correct", "final answer"),
    # Alternatives with "or": one union of inequalities, else a hedge
    (COT + "So the domain is $x<2$ or $x>3$.", r"(-\infty, 2) \cup (3, \infty)", "correct", "math span"),
    (COT + "So the domain is $x<2$ or $x>4$.", r"(-\infty, 2) \cup (3, \infty)", "wrong", "math span"),
    (COT + "So $x = 2$ or $x = 3$.", "3", "wrong", "math span"),
    (COT + r"the values are those with $3 < \lambda \le 4$.", "(3,4]", "correct", "math span"),
    # Matrices and vectors written as models write them
    (COT + r"\[ \mathbf{v} = \begin{pmatrix} -\dfrac{1}{3} \\[4pt] \dfrac{2}{3} \end{pmatrix} \]",
     r"\begin{pmatrix} -1/3 \\ 2/3 \end{pmatrix}", "correct", "math span"),
    (COT + r"**Final Answer:** \(\mathbf{v} = (-7, 16, 5)\)", r"\begin{pmatrix} -7 \\ 16 \\ 5 \end{pmatrix}", "correct",
     "final answer"),
    (COT + "leaving $-\\mathbf{I}$.\n\n$$\\mathbf{A}^{3} = \\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}$$",
     r"\begin{pmatrix} -1 & 0 \\ 0 & -1 \end{pmatrix}", "correct", "math span"),
    # Unicode operators models write, and memberships in different variables
    ("x ∈ [-0.2,0.5]", r"x \in [-0.2, 0.5]", "correct", "bare"),
    ("x ∈ [-0.2,0.5]", r"y \in [-0.2, 0.5]", "wrong", "bare"),
    (COT + r"\boxed{(-\infty, 1) ∪ (2, \infty)}", r"(-\infty,1)\cup(2,\infty)", "correct", "boxed"),
    (COT + r"\boxed{2π}", r"2\pi", "correct", "boxed"),
    # Ordinals
    (COT + r"\[ \boxed{9^{\text{th}} \text{ grade}} \]", "9", "correct", "boxed"),
    (COT + r"\boxed{2^{nd}}", "2", "correct", "boxed"),
    ("The winner finished 3rd.", "3", "correct", "last number"),
    (COT + r"\boxed{4^{\text{th}}}", "3", "wrong", "boxed"),
    # "or" inside one box: the list a gold of several asks for, else a hedge
    (COT + r"\boxed{x = 3 \text{ or } x = -5}", "3, -5", "correct", "boxed"),
    (COT + r"\boxed{4 \quad \text{or} \quad -2}", "-2, 4", "correct", "boxed"),
    (COT + r"\boxed{x = 3 \text{ or } x = -5}", "3", "wrong", "boxed"),
    (COT + r"\boxed{3 \text{ or } 3.0}", "3", "correct", "boxed"),
    # Roots, powers and pi written in plain text are read whole, never as their digits
    (COT + "So the unicycle's speed is 12π inches per second.", r"12\pi", "correct", "last number"),
    (COT + "So the unicycle's speed is 12π inches per second.", "12", "wrong", "last number"),
    (COT + "Therefore, the distance between the points is 3√13 units.", r"3\sqrt{13}", "correct", "last number"),
    (COT + "Therefore, the distance between the points is √117 units.", "117", "wrong", "last number"),
    (COT + "So there are 2^10 subsets.", "1024", "correct", "last number"),
    # An exact value with its approximation, or restated in other units: the value first stated
    (COT + "So, the unicycle's speed is 12π ≈ 37.7 inches per second.", r"12\pi", "correct", "last number"),
    (COT + "It will take Andy 227 minutes, or 3 hours and 47 minutes, to string the racquets.", "227", "correct",
     "last number"),
    (COT + "It will take Andy 227 minutes, or 3 hours and 47 minutes, to string the racquets.", "47", "wrong",
     "last number"),
    (COT + "So the bus needs 1.5 hours, or 90 minutes.", "90", "correct", "last number"),  # one number: not cut
    (COT + "Total cost is 4 × 2.5 ≈ 10 dollars.", "10", "correct", "last number"),  # a product's approximation
    (COT + "Total cost is 4 × 2.5 ≈ 10 dollars.", "2.5", "wrong", "last number"),
    (COT + "Each person gets 10 / 3 ≈ 3.33 dollars.", "3", "wrong", "last number"),
    (COT + "The answer is 5, or 6 days.", "5", "wrong", "last number"),  # a hedge, not a restatement
    (COT + "The distance is 2√3/3.", r"\frac{2\sqrt{3}}{3}", "correct", "last number"),
    (COT + "The distance is 2√3/3.", r"2\sqrt{3}", "wrong", "last number"),
    (COT + "The area is 12π/5 square units.", r"12\pi", "wrong", "last number"),
    (COT + "The probability is 1/2^10.", r"\frac{1}{1024}", "correct", "last number"),
    (COT + "So the answer is 5, or 15 if we count both ends.", "5", "wrong", "last number"),
    # Repeating decimals are the fractions they are; a choice letter may carry its option's text
    (COT + r"so the probability is \(\boxed{0.\overline{3}}\).", r"\frac{1}{3}", "correct", "boxed"),
    (COT + r"The final answer is: $\boxed{1.\overline{3}}$", r"\frac43", "correct", "boxed"),
    (COT + r"so it is $\boxed{0.1\overline{6}}$.", r"\frac{1}{6}", "correct", "boxed"),
    (COT + r"so it is $\boxed{0.\overline{16}}$.", r"\frac{1}{6}", "wrong", "boxed"),
    (COT + r"Therefore, the answer is \(\boxed{\text{(E) Hyperbola}}\).", r"\text{(E)}", "correct", "boxed"),
    (COT + r"Therefore, the answer is \(\boxed{\text{(D) Ellipse}}\).", r"\text{(E)}", "wrong", "boxed"),
    # An interval with points left out is the union it is, against a set of reals only
    (COT + r"\[\boxed{0 < x < 36,\ x \neq 9}\]", r"(0,9) \cup (9,36)", "correct", "boxed"),
    (COT + r"\[\boxed{0 < x < 36}\]", r"(0,9) \cup (9,36)", "wrong", "boxed"),
    (COT + r"So the domain is $\boxed{x \neq 2, x \neq -3}$.", r"(-\infty,-3)\cup(-3,2)\cup(2,\infty)", "correct", "boxed"),
    (COT + r"So the domain is $\boxed{x \neq 2}$.", r"(-\infty,-3)\cup(-3,2)\cup(2,\infty)", "wrong", "boxed"),
    (COT + r"$\boxed{-2 \le x \le 7,\ x \ne 7}$", "[-2, 7)", "correct", "boxed"),
    (COT + r"$\boxed{x \ne 2}$", "2", "wrong", "boxed"),
    (COT + r"$\boxed{0 \le x \le 36, x \ne 9, x\ne 9}$", r"[0,9)\cup(9,36]", "correct", "boxed"),
    (COT + r"$\boxed{(0, 36), x \ne 9}$", r"(0,9)\cup(9,36)", "correct", "boxed"),
    (COT + r"$\boxed{1,000.\overline{3}}$", r"\frac{3001}{3}", "correct", "boxed"),
    (COT + r"$\boxed{1,000.\overline{3}}$", r"1, \frac{1}{3}", "wrong", "boxed"),
    (COT + r"$\boxed{\text{(A) and (C)}}$", "A", "wrong", "boxed"),
    (COT + r"$\boxed{\text{(B) Plane and line}}$", r"\text{(B)}", "correct", "boxed"),
    # A scale word makes the number it scales to (never a unit to drop)
    (COT + r"So she earns $\boxed{\$1.45 \text{ million}}$.", "1,450,000", "correct", "boxed"),
    (COT + "So the company earned $1.45 million in total.", "1450000", "correct", "last number"),
    (COT + "So the company earned $1.45 million in total.", "1.45", "wrong", "last number"),
    (COT + "So she bought 2 dozen eggs.", "24", "correct", "last number"),
    # Two boxes offered with "or" in one sentence are a hedge, whatever words stand between them;
    # the same value restated (in other units, "or equivalently") is not
    (COT + r"So the answer is \(\boxed{3}\) distinct books, or \(\boxed{6}\) if each reading counts.", "6", "wrong",
     "boxed"),
    (COT + r"It takes \(\boxed{2}\) hours, or \(\boxed{120}\) minutes.", "120", "correct", "boxed"),
    (COT + "\\[ \\boxed{\\frac{\\binom{d}{k} (k-1)!}{2}} \\]\nor equivalently,\n\\[ \\boxed{\\frac{d!}{2 (d-k)! k}} \\]",
     r"\frac{d !}{2 k(d-k) !}", "correct", "boxed"),
    (COT + r"We get \(\boxed{3}\). So the final answer is \(\boxed{6}\).", "6", "correct", "boxed"),
]


@pytest.mark.parametrize(("completion", "gold", "status", "source"), GOLDEN)
def test_real_answer_shapes(completion, gold, status, source):
    verdict = math_verifier.verify(completion, gold)
    if status == "no_answer":
        assert "cut off" in verdict.reason, verdict
    assert (verdict.status, verdict.details.get("source")) == (status, source), verdict


# ---------------------------------------------------------------------------------------------
# A gold that is not maths is the gold's fault


@pytest.mark.parametrize("gold", ["forty two", "Forty-two", "Answer is forty two.", "Answer is forty two",
                                  "The answer is unknown to us"])
def test_a_gold_in_words_is_an_error_never_a_wrong_zero(gold):
    verdict = math_verifier.verify(r"so \boxed{42}", gold)
    assert verdict.status == "error" and "gold" in verdict.reason


def test_a_gold_sentence_with_a_value_is_read():
    assert math_verifier.verify(r"so \boxed{42}", "The answer is 42.").correct


# ---------------------------------------------------------------------------------------------
# Reasoning models: only what follows </think>


def test_after_think_grades_only_the_final_part():
    draft = r"<think>maybe \boxed{41}? no: 6 * 7 = 42</think>"
    assert math_verifier.verify(draft + r" The answer is \boxed{42}.", "42", after_think=True).correct
    assert math_verifier.verify(draft + r" The answer is \boxed{41}.", "42", after_think=True).status == "wrong"
    assert math_verifier.verify(r"<think>so \boxed{42}</think> I am not sure.", "42", after_think=True).status == "no_answer"
    assert math_verifier.verify(r"<think>so \boxed{42}</think> I am not sure.", "42").status == "no_answer"  # the default
    assert math_verifier.verify(r"<think>so \boxed{42}</think> I am not sure.", "42", after_think=False).correct  # reads all


def test_an_unclosed_think_block_is_no_answer_after_think():
    verdict = math_verifier.verify(r"<think>so far \boxed{42} and then the budget ran", "42", after_think=True)
    assert verdict.status == "no_answer" and "</think>" in verdict.reason
    assert math_verifier.verify("no think block: \\boxed{42}", "42", after_think=True).correct


def test_after_think_must_be_a_bool():
    assert math_verifier.verify("42", "42", after_think="yes").status == "error"


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), -1, 0])
def test_a_timeout_that_is_not_a_finite_positive_number_is_an_error(timeout):
    verdict = math_verifier.verify(r"\boxed{2\sqrt{2}}", r"\sqrt{8}", timeout=timeout)
    assert verdict.status == "error" and "timeout=" in verdict.reason


# ---------------------------------------------------------------------------------------------
# Properties: the fallbacks never outrank a final answer; the element fast path is math-verify's


_PROSE = st.text(alphabet=st.sampled_from(list("abcdefghij klmnop,.=+-()0123456789\n$")), max_size=120)
_FINAL = st.sampled_from([r"\boxed{{{}}}", "The final answer is ${}$.", "<answer>{}</answer>", "**Answer:** {}"])


@given(_PROSE, _PROSE, _FINAL, st.integers(0, 999), st.integers(1, 99))
@settings(max_examples=300, deadline=None)
def test_a_final_answer_always_beats_numbers_in_the_prose(before, after, final, gold, offset):
    wrong = gold + offset
    completion = f"{before} {gold} {before}\n{final.format(wrong)}\n{after} {gold}"  # the prose holds no "answer"
    if final.startswith("<answer>"):
        completion = f"{before} {gold}\n{final.format(wrong)}"
    elif "Answer" in final:
        completion = f"{before} {gold}\n{final.format(wrong)}"
    found = extract_answer(completion)
    assert found is not None and found.source in ("boxed", "final answer", "answer tag"), (completion, found)
    assert math_verifier.verify(completion, str(gold)).status == "wrong", completion


@given(_PROSE, st.integers(0, 999))
@settings(max_examples=200, deadline=None)
def test_prose_fallback_only_reads_when_nothing_better_exists(prose, gold):
    completion = prose.replace("$", "") + f" so \\boxed{{{gold + 1}}}"
    assert math_verifier.verify(completion, str(gold)).status == "wrong"


_ELEMENT = st.one_of(st.integers(-20, 20).map(str), st.fractions(min_value=-5, max_value=5, max_denominator=6).map(
    lambda f: str(f.numerator) if f.denominator == 1 else f"\\frac{{{f.numerator}}}{{{f.denominator}}}"))


@given(st.lists(_ELEMENT, min_size=2, max_size=4), st.lists(_ELEMENT, min_size=2, max_size=4),
       st.sampled_from(["set", "tuples", "tuple"]))
@settings(max_examples=90, deadline=None)
def test_element_fast_path_agrees_with_math_verify(gold_items, answer_items, shape):
    from referee.verifiers.math_sympy import equivalent  # the worker side, here in-process

    if shape == "tuples":
        gold = ", ".join(f"({item}, 1)" for item in gold_items)
        answer = ", ".join(f"({item}, 1)" for item in answer_items)
    elif shape == "tuple":
        gold, answer = f"({', '.join(gold_items)})", f"({', '.join(answer_items)})"
    else:
        gold, answer = ", ".join(gold_items), ", ".join(reversed(answer_items))
    if exact_elements(answer) is None or exact_elements(gold) is None:
        return
    verdict = math_verifier.verify(answer, gold)
    assert verdict.details["method"] in ("elements", "text")
    assert verdict.correct == equivalent(gold, answer, CompareOptions())[0], (gold, answer)


def test_element_sets_are_exact():
    assert exact_elements("1, 0.5") == ("set", (Fraction(1, 2), Fraction(1)))
    assert math_verifier.verify(r"\boxed{0.3333333, 1}", r"\frac{1}{3}, 1").correct  # rounding: sympy decides


# ---------------------------------------------------------------------------------------------
# Properties of the new parsers


_WORDS = st.lists(st.sampled_from(["so", "the", "total", "is", "apples", "left", "we", "get", "and", "then"]), max_size=8)


@given(_WORDS, st.integers(-10**9, 10**9), st.sampled_from(["", ".", " apples.", " dollars", "!"]))
@settings(max_examples=200, deadline=None)
def test_the_last_number_in_prose_is_read_exactly(words, number, tail):
    from referee.verifiers.math_extract import last_prose_number

    sentence = " ".join(words) + f" {number:,}{tail}"
    assert last_prose_number(sentence)[1] == str(number)


@given(st.integers(0, 10**6), st.integers(0, 99))
@settings(max_examples=200, deadline=None)
def test_a_decimal_comma_reads_as_its_decimal_point(whole, decimals):
    decimal = f"{whole}.{decimals:02d}"
    assert math_verifier.verify(f"Le total est de {whole},{decimals:02d} euros.", decimal).correct
    assert math_verifier.verify(f"{whole},{decimals:02d}", decimal).correct


@given(st.lists(_ELEMENT, min_size=1, max_size=5))
@settings(max_examples=200, deadline=None)
def test_top_level_parts_split_only_outside_brackets(items):
    from referee.verifiers.math_forms import top_level_parts

    wrapped = [f"({item}, 1)" for item in items]
    assert top_level_parts(", ".join(wrapped)) == wrapped
    assert top_level_parts(", ".join(items)) == items


_CELL = st.integers(-9, 9)


@given(st.integers(1, 3), st.integers(1, 3), st.data())
@settings(max_examples=40, deadline=None)
def test_matrix_fast_path_agrees_with_math_verify(rows, columns, data):
    from referee.verifiers.math_sympy import equivalent

    def matrix(cells):
        body = r" \\ ".join(" & ".join(str(cells[r * columns + c]) for c in range(columns)) for r in range(rows))
        return rf"\begin{{pmatrix}} {body} \end{{pmatrix}}"

    gold_cells = data.draw(st.lists(_CELL, min_size=rows * columns, max_size=rows * columns))
    answer_cells = data.draw(st.one_of(st.just(gold_cells), st.lists(_CELL, min_size=rows * columns,
                                                                      max_size=rows * columns)))
    gold, answer = matrix(gold_cells), matrix(answer_cells)
    verdict = math_verifier.verify(answer, gold)
    assert verdict.details["method"] in ("elements", "text")
    assert verdict.correct == equivalent(gold, answer, CompareOptions())[0], (gold, answer)


@given(st.lists(st.integers(-9, 9), min_size=4, max_size=4), st.lists(st.integers(-9, 9), min_size=4, max_size=4))
@settings(max_examples=40, deadline=None)
def test_union_fast_path_never_contradicts_math_verify(gold_ends, answer_ends):
    from referee.verifiers.math_sympy import equivalent

    def union(ends):
        a, b, c, d = sorted(ends)
        return rf"(-\infty, {a}) \cup ({b}, {c}) \cup ({d}, \infty)"

    gold, answer = union(gold_ends), union(answer_ends)
    verdict = math_verifier.verify(answer, gold)
    if verdict.details["method"] == "value":
        assert not equivalent(gold, answer, CompareOptions())[0], (gold, answer)


_SIMPLE = st.lists(st.sampled_from(["x", "n", "2", "13", r"\pi", r"\sqrt{3}", "+", "-", "^2", r"\frac{1}{2}", " ", "(", ")"]),
                   min_size=1, max_size=6).map("".join)


@given(st.lists(_SIMPLE, min_size=1, max_size=3), st.sampled_from(["list", "tuple", "definition", "tuples"]))
@settings(max_examples=80, deadline=None)
def test_a_gold_that_surely_parses_parses_for_math_verify(items, shape):
    from referee.verifiers.math_sympy import gold_problem
    from referee.verifiers.math_values import surely_parses

    text = {"list": ", ".join(items), "tuple": f"({', '.join(items)})", "definition": f"f(x) = {items[0]}",
            "tuples": ", ".join(f"({item}, 1)" for item in items)}[shape]
    if surely_parses(text):
        assert gold_problem(text) is None, text


@given(_SIMPLE, _SIMPLE)
@settings(max_examples=80, deadline=None)
def test_definitions_far_apart_are_never_equal_for_math_verify(answer_value, gold_value):
    from referee.verifiers.math_sympy import equivalent

    answer, gold = f"f(x) = {answer_value}", f"f(x) = {gold_value}"
    verdict = math_verifier.verify(answer, gold)
    # what the value check compared: the answer as read (a run such as "xxx" reads as a word, so
    # "f(x) = 22xxx\pi" is read as its last number, 22, which is then rightly far from the gold)
    if verdict.details.get("method") == "value":
        assert not equivalent(gold, verdict.extracted, CompareOptions())[0], (gold, answer, verdict.extracted)
