"""A fixed set of English passages the dense encoder calibrates on: OpenVINO's int8
quantization collects its activation ranges on them, and the automatic route choice times
each route and checks its vectors against float32 on them (see :mod:`heta_eval.encoding.routes`).

They mix the kinds of text retrieval benchmarks hold (scientific abstracts, claims, questions,
news, reviews, code documentation), short and long: some pass the model's 256 word pieces, as
most scientific abstracts do. Changing them changes the quantized model (its cache key holds
them).
"""

from __future__ import annotations

__all__ = ["CALIBRATION_TEXTS"]

_ABSTRACTS = (
    "Effects of aerobic exercise on hippocampal volume in older adults. The hippocampus shrinks "
    "in late adulthood, leading to impaired memory and increased risk for dementia. In a "
    "randomized controlled trial with 120 older adults, we show that one year of aerobic "
    "exercise training increases the size of the anterior hippocampus by 2%, effectively "
    "reversing age-related loss in volume by one to two years. Increased hippocampal volume was "
    "associated with greater serum levels of brain-derived neurotrophic factor (BDNF), a "
    "mediator of neurogenesis in the dentate gyrus. Hippocampal volume declined in the control "
    "group, but higher preintervention fitness partially attenuated the decline, suggesting that "
    "fitness protects against volume loss. Caudate nucleus and thalamus volumes were unaffected "
    "by the intervention. These theoretically important findings indicate that aerobic exercise "
    "training is effective at reversing hippocampal volume loss in late adulthood, which is "
    "accompanied by improved memory function.",
    "Tumour necrosis factor-alpha (TNF-α) signalling in the pathogenesis of rheumatoid "
    "arthritis. Synovial inflammation in rheumatoid arthritis is driven by a network of "
    "cytokines in which TNF-α occupies a dominant position. Blockade of TNF-α with monoclonal "
    "antibodies or soluble receptors (infliximab, etanercept, adalimumab) reduces joint "
    "swelling, C-reactive protein and radiographic progression in 50-70% of patients. We "
    "analysed synovial biopsies from 84 patients before and 12 weeks after therapy; responders "
    "showed decreased expression of IL-6, IL-1β and matrix metalloproteinase-3 (p < 0.001), "
    "while non-responders retained high CD68+ macrophage counts in the sublining layer. "
    "Macrophage depletion therefore predicts clinical response and may serve as a biomarker in "
    "early-phase trials of new anti-rheumatic agents.",
    "Genome-wide association study identifies new susceptibility loci for type 2 diabetes. We "
    "genotyped 1,464 patients and 1,467 matched controls of European ancestry at 386,731 single "
    "nucleotide polymorphisms (SNPs) and followed up the strongest associations in 10,850 "
    "additional samples. Besides confirming variants in TCF7L2, PPARG and KCNJ11, we identified "
    "associations near CDKAL1, IGF2BP2 and CDKN2A/B (combined P = 7.8 × 10^-15 to 1.2 × 10^-9). "
    "The risk alleles were associated with reduced insulin secretion in non-diabetic carriers, "
    "suggesting that beta-cell dysfunction, rather than insulin resistance, underlies most of "
    "the inherited risk. Together the loci explain about 2.3% of the variance in disease risk.",
    "Structural basis of SARS-CoV-2 spike protein recognition by the ACE2 receptor. Cryo-electron "
    "microscopy at 2.9 Å resolution reveals the receptor-binding domain (RBD) in its up "
    "conformation engaged with the peptidase domain of human angiotensin-converting enzyme 2. "
    "Compared with SARS-CoV, the interface buries an additional 150 Å2 and forms a salt bridge "
    "between Lys417 and Asp30, consistent with a four-fold higher binding affinity measured by "
    "surface plasmon resonance (KD = 14.7 nM). Neutralizing antibodies isolated from "
    "convalescent donors compete with ACE2 for the same epitope. These data provide a framework "
    "for structure-guided vaccine design and for monitoring escape mutations.",
    "Long-term outcomes of bariatric surgery: a 20-year prospective cohort. Among 4,047 obese "
    "subjects, 2,010 underwent gastric bypass, banding or vertical banded gastroplasty and 2,037 "
    "received usual care. After 20 years, surgery was associated with sustained weight loss "
    "(-18% vs -1%), lower incidence of diabetes, myocardial infarction and stroke, and reduced "
    "overall mortality (adjusted hazard ratio 0.71; 95% CI 0.54-0.92). Rates of alcohol abuse "
    "and reoperation were higher in the surgery group. Benefits were independent of baseline "
    "body-mass index, suggesting that selection criteria for surgery need revision.",
)

_SHORT = (
    "Vitamin D supplementation reduces the risk of respiratory infections.",
    "Statins lower LDL cholesterol but increase the incidence of type 2 diabetes.",
    "Microglia prune synapses during postnatal brain development.",
    "What is the half-life of caffeine in adults?",
    "How do mRNA vaccines instruct cells to make the spike protein?",
    "Does intermittent fasting improve insulin sensitivity in obese patients?",
    "The central bank raised interest rates by a quarter point on Wednesday, citing persistent "
    "inflation in services and a tight labour market, and signalled that further increases "
    "remain possible if price growth does not slow by the end of the year.",
    "Great little café: the espresso was strong without being bitter, the pastries were fresh "
    "and the staff remembered our order on the second visit. Seating is limited at weekends.",
    "Returns a new array of the given shape filled with zeros. Parameters: shape (int or tuple "
    "of ints), dtype (data type, optional, default float64), order ('C' or 'F'). Raises "
    "ValueError if the shape is negative.",
    "The Treaty of Westphalia (1648) ended the Thirty Years' War and established the principle "
    "of state sovereignty that still shapes international law.",
    "Photosynthesis converts light energy into chemical energy stored in glucose; the light "
    "reactions take place in the thylakoid membranes and the Calvin cycle in the stroma.",
    "BRCA1 mutations increase lifetime breast cancer risk to 60-80%.",
    "A 54-year-old man presented with chest pain radiating to the left arm, diaphoresis and ST "
    "elevation in leads II, III and aVF; troponin I was 3.2 ng/mL.",
    "Graphene's electron mobility exceeds 200,000 cm2/(V·s) at room temperature when suspended.",
    "Install the package with pip, then run the command line tool with --help to list options.",
)


def _long(first: int) -> str:
    """Two abstracts joined: a passage well past the model's 256 word pieces."""
    return f"{_ABSTRACTS[first]} {_ABSTRACTS[(first + 1) % len(_ABSTRACTS)]}"


#: The calibration passages, in a fixed order.
CALIBRATION_TEXTS: tuple[str, ...] = (
    *_ABSTRACTS,
    *_SHORT,
    *(_long(i) for i in range(4)),
)
